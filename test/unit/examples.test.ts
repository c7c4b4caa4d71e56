import { expect } from 'chai';
import { publicApi } from '../../src/api/public.js';
import { loadConfig, serviceVersion } from '../../src/common/config.js';
import { eventCatalog } from '../../src/events/catalog.js';
import { createSchemaAjv } from '../../src/kernel/model/ajv.js';
import { loadRegistry } from '../../src/kernel/registry/registry.js';
import { buildOpenApi } from '../../src/openapi/document.js';
import { eventExample, exampleOf } from '../../src/openapi/examples.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reading a document built as plain JSON
type Json = Record<string, any>;

describe('example payloads', () => {
  it('builds values from examples, const, enum, formats and id patterns, leaving optional ones null', () => {
    const schemas = { Thing: { type: 'object', required: ['id', 'n'], properties: { id: { type: 'string', pattern: '^thing_[0-9a-z]+$' }, n: { type: 'integer', minimum: 3 }, skipped: { type: 'string' } } } };
    const example = exampleOf(
      {
        type: 'object',
        required: ['a', 'b', 'c', 'd', 'e', 'f', 'g'],
        properties: {
          a: { type: 'string', examples: ['given'] },
          b: { type: 'string', const: 'fixed' },
          c: { type: 'string', enum: ['x', 'y'] },
          d: { type: 'string', format: 'date-time' },
          e: { type: ['string', 'null'], format: 'date' },
          f: { $ref: '#/components/schemas/Thing' },
          g: { type: 'array', items: { type: 'boolean' } },
        },
      },
      schemas,
    );
    expect(example).to.deep.equal({ a: 'given', b: 'fixed', c: 'x', d: '2026-11-23T09:30:00.000Z', e: null, f: { id: 'thing_01jdx8q2m5t7v9', n: 3 }, g: [true] });
  });

  it("gives every webhook of the public document an example that its own payload schema accepts", async () => {
    const config = loadConfig({});
    const registry = await loadRegistry(config.pluginsDir);
    const document = buildOpenApi(publicApi(registry), registry, serviceVersion(), { timeoutMs: 10_000, retryDelays: [5] }) as Json;
    const ajv = createSchemaAjv({ strict: false });
    const names = [...eventCatalog(registry).map((e) => e.name), 'webhook.test'];
    expect(Object.keys(document.webhooks).sort()).to.deep.equal([...names].sort());
    for (const name of names) {
      const schema = document.webhooks[name].post.requestBody.content['application/json'].schema as Json;
      const example = eventExample(document, name) as Json;
      expect(example.type, name).to.equal(name);
      const validate = ajv.compile({ ...schema, components: document.components });
      expect(validate(example), `${name}: ${JSON.stringify(validate.errors)}`).to.equal(true);
    }
  });
});
