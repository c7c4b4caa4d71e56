/** Types for inflation (it ships none): a request's stream, decoded as its Content-Encoding says. */
declare module 'inflation' {
  import type { Readable } from 'node:stream';
  /** The stream itself for identity; a zlib stream for gzip, deflate and br; throws (status 415) for any other. */
  export default function inflate(stream: Readable, options?: { encoding?: string }): Readable;
}
