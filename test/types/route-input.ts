/**
 * Type fixtures: `npm run typecheck` compiles this file, and each `@ts-expect-error` below fails
 * the check unless the line under it is a compile error. A route's handler receives the input
 * its schemas declare (src/http/route.ts `route()`).
 */
import { route, type Route } from '../../src/http/route.js';
import { PAGE_PARAMETERS } from '../../src/kernel/model/index.js';

export const typedRoute: Route = route({
  method: 'post',
  path: '/fixtures',
  operationId: 'fixture',
  summary: 'A fixture for the compiler only',
  tag: 'fixtures',
  access: null,
  query: { type: 'object', additionalProperties: false, properties: { ...PAGE_PARAMETERS, sort: { type: 'string', enum: ['a', 'b'], default: 'a' } } },
  body: { schema: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string' }, size: { type: 'integer' } } } },
  success: { status: 200, description: 'Nothing.' },
  errors: [],
  handle: (input) => {
    // Defaults make a member present (ajv fills them in); the rest may be absent.
    const limit: number = input.query.limit;
    const sort: 'a' | 'b' = input.query.sort;
    const cursor: string | undefined = input.query.cursor;
    const name: string = input.body.name;
    const size: number | undefined = input.body.size;
    // @ts-expect-error -- a parameter the query does not declare
    void input.query.limt;
    // @ts-expect-error -- a member the body does not declare
    void input.body.nmae;
    // @ts-expect-error -- an integer is not a text
    const wrong: string = input.body.size;
    return { body: { limit, sort, cursor, name, size, wrong } };
  },
});
