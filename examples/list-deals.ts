/**
 * Lists deals with a client typed from the served OpenAPI document: `openapi-typescript` turns
 * the document into types (`npm run example:check` does it, then type-checks this file), and
 * `openapi-fetch` makes the calls. Run it against a server:
 *
 *   WSAPI_TOKEN=wsk_... npx tsx examples/list-deals.ts [stage]
 *
 * MIN_AMOUNT=100000 lists only deals of at least that amount (minor units: `amount[gte]`);
 * SEARCH="web red" only deals whose title has words starting with each (`q`);
 * WITH_CLIENT=1 reads each deal's client in the same request (`expand=client`, which needs
 * read:clients) and prints its name.
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

const minAmount = process.env.MIN_AMOUNT === undefined ? undefined : Number(process.env.MIN_AMOUNT);
const withClient = process.env.WITH_CLIENT === '1';
const search = process.env.SEARCH || undefined;

function show(deal: Deal): string {
  const amount = deal.amount === null ? '' : ` ${(deal.amount / 100).toFixed(2)} ${deal.currency ?? ''}`;
  // `client` is there with expand=client: the client object, or null when the deal has none.
  const client = deal.client ? `\t${deal.client.name}` : '';
  return `${deal.id}\t${deal.stage}\t${deal.title}${amount}${client}`;
}

let cursor: string | undefined;
do {
  const query = {
    limit: 200,
    sort: 'created_at' as const,
    ...(stage ? { stage } : {}),
    ...(minAmount !== undefined ? { 'amount[gte]': minAmount } : {}),
    ...(withClient ? { expand: 'client' } : {}),
    ...(search ? { q: search } : {}),
    ...(cursor ? { cursor } : {}),
  };
  const { data, error, response } = await client.GET('/deals', { params: { query } });
  if (error) {
    console.error(`${response.status} ${error.code}: ${error.detail} (request ${error.request_id})`);
    process.exit(1);
  }
  for (const deal of data.data) console.log(show(deal));
  cursor = data.next_cursor ?? undefined;
} while (cursor);
