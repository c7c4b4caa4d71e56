/**
 * Lists deals with a client typed from the served OpenAPI document: `openapi-typescript` turns
 * the document into types (`npm run example:check` does it, then type-checks this file), and
 * `openapi-fetch` makes the calls. Run it against a server:
 *
 *   WSAPI_TOKEN=wsk_... npx tsx examples/list-deals.ts [stage]
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/api.js';

type Deal = components['schemas']['Deal'];
type Stage = NonNullable<paths['/deals']['get']['parameters']['query']>['stage'];

const token = process.env.WSAPI_TOKEN;
if (!token) {
  console.error('Set WSAPI_TOKEN to an API key with read:deals.');
  process.exit(2);
}
const client = createClient<paths>({
  baseUrl: `${process.env.WSAPI_URL ?? 'http://127.0.0.1:3000'}/v1`,
  headers: { Authorization: `Bearer ${token}` },
});
const stage = process.argv[2] as Stage;

function show(deal: Deal): string {
  const amount = deal.amount === null ? '' : ` ${(deal.amount / 100).toFixed(2)} ${deal.currency ?? ''}`;
  return `${deal.id}\t${deal.stage}\t${deal.title}${amount}`;
}

let cursor: string | undefined;
do {
  const { data, error, response } = await client.GET('/deals', { params: { query: { limit: 200, sort: 'created_at', ...(stage ? { stage } : {}), ...(cursor ? { cursor } : {}) } } });
  if (error) {
    console.error(`${response.status} ${error.code}: ${error.detail} (request ${error.request_id})`);
    process.exit(1);
  }
  for (const deal of data.data) console.log(show(deal));
  cursor = data.next_cursor ?? undefined;
} while (cursor);
