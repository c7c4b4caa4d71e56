import type { Schemas } from './api';
import { when, When } from './ui';

const HOUR = 3_600_000;

/**
 * A key's requests per hour over the 7 days before `now`, one bar per hour: the answered part
 * and the rate-limited part stacked in two colours. The figures behind it are in a table below,
 * for screen readers and for anyone who wants the numbers.
 */
export function UsageChart({ buckets, now }: { buckets: Array<Schemas['UsageList']['data'][number]>; now: number }) {
  const end = Math.floor(now / HOUR) * HOUR + HOUR;
  const start = end - 7 * 24 * HOUR;
  const hours = 7 * 24;
  const byHour = new Map(buckets.map((b) => [Math.floor(Date.parse(b.start) / HOUR) * HOUR, b]));
  const max = Math.max(1, ...buckets.map((b) => b.requests));
  const total = buckets.reduce((n, b) => n + b.requests, 0);
  const limited = buckets.reduce((n, b) => n + b.rate_limited, 0);
  const busiest = buckets.reduce<(typeof buckets)[number] | undefined>((top, b) => (top === undefined || b.requests > top.requests ? b : top), undefined);
  const summary = `${total} requests in the last 7 days, ${limited} of them rate limited.${busiest ? ` Busiest hour: ${when(busiest.start)} with ${busiest.requests}.` : ''}`;
  const height = 100;
  const bars = [];
  for (let i = 0; i < hours; i += 1) {
    const bucket = byHour.get(start + i * HOUR);
    if (!bucket) continue;
    const ok = ((bucket.requests - bucket.rate_limited) / max) * height;
    const refused = (bucket.rate_limited / max) * height;
    bars.push(
      <g key={i}>
        <rect class="bar-ok" x={i} y={height - ok} width={0.8} height={ok} />
        <rect class="bar-limited" x={i} y={height - ok - refused} width={0.8} height={refused} />
      </g>,
    );
  }
  return (
    <figure class="chart">
      <figcaption>
        Requests per hour, last 7 days ({total === 0 ? 'none yet' : `peak ${max} in an hour`}). <span class="legend legend-ok">answered</span> <span class="legend legend-limited">rate limited</span>
      </figcaption>
      <svg viewBox={`0 0 ${hours} ${height}`} preserveAspectRatio="none" role="img" aria-label={summary}>
        <line class="axis" x1={0} y1={height} x2={hours} y2={height} />
        {bars}
      </svg>
      <p class="chart-range muted">
        <span>{when(new Date(start).toISOString())}</span>
        <span>now</span>
      </p>
      <p>{summary}</p>
      {buckets.length > 0 && (
        <details>
          <summary>Hourly figures</summary>
          <table>
            <caption class="visually-hidden">Requests per hour</caption>
            <thead>
              <tr>
                <th scope="col">Hour</th>
                <th scope="col">Requests</th>
                <th scope="col">Rate limited</th>
                <th scope="col">Other 4xx</th>
                <th scope="col">5xx</th>
              </tr>
            </thead>
            <tbody>
              {[...buckets].reverse().map((b) => (
                <tr key={b.start}>
                  <td><When at={b.start} /></td>
                  <td>{b.requests}</td>
                  <td>{b.rate_limited}</td>
                  <td>{b.client_errors}</td>
                  <td>{b.server_errors}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      )}
    </figure>
  );
}
