/** Types for parse-prometheus-text-format (it ships none): the families of a scrape. */
declare module 'parse-prometheus-text-format' {
  export interface Sample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface Family {
    name: string;
    help: string;
    type: string;
    metrics: Sample[];
  }
  export default function parsePrometheusTextFormat(text: string): Family[];
}
