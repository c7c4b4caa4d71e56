import { expect } from 'chai';
import { ApiError } from '../../src/common/errors.js';
import type { Row } from '../../src/kernel/model/define.js';
import { runValidate } from '../../src/kernel/write/hooks.js';
import type { CompiledResource } from '../../src/kernel/registry/registry.js';

/** A resource whose validate hook returns `returned`: all runValidate reads of it. */
const returning = (returned: unknown) => ({ def: { name: 'probe', validate: () => returned } }) as unknown as CompiledResource;
const ctx = { workspaceId: 'ws_1', now: new Date(0) };
const run = (returned: unknown) => runValidate(returning(returned), {} as Row, undefined, ctx);
const caught = async (returned: unknown) => run(returned).then(() => undefined, (err: unknown) => err);

describe('a plugin\'s validate hook: what it returns', () => {
  it('lets a write through on no problems (an empty list, undefined)', async () => {
    expect(await caught([])).to.equal(undefined);
    expect(await caught(undefined)).to.equal(undefined);
    expect(await caught(Promise.resolve([]))).to.equal(undefined);
  });

  it('answers 422 with each problem at its pointer', async () => {
    const err = await caught([{ pointer: '/due_at', detail: 'is required when effort is over 50' }, { pointer: '', detail: 'is not a task' }]);
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code).to.equal('validation_failed');
    expect((err as ApiError).extras.errors).to.deep.equal([
      { pointer: '/due_at', message: 'is required when effort is over 50' },
      { pointer: '', message: 'is not a task' },
    ]);
  });

  it('is the plugin\'s bug, not a client\'s 422, when a problem has no JSON pointer or no detail, or the list is none', async () => {
    for (const [returned, message] of [
      [[{ pointer: 'label', detail: 'bad' }], 'probe validate returned a problem whose pointer "label" is not a JSON pointer, such as "/title"'],
      [[{ detail: 'bad' }], 'probe validate returned a problem whose pointer undefined is not a JSON pointer, such as "/title"'],
      [[{ pointer: '/label' }], 'probe validate returned a problem at "/label" without its detail, the sentence a client reads'],
      [[{ pointer: '/label', detail: ' ' }], 'probe validate returned a problem at "/label" without its detail, the sentence a client reads'],
      [[null], 'probe validate returned a problem whose pointer undefined is not a JSON pointer, such as "/title"'],
      ['nope', 'probe validate returned "nope", not a list of problems ([{ pointer, detail }])'],
    ] as const) {
      const err = await caught(returned);
      expect(err, JSON.stringify(returned)).to.be.instanceOf(Error);
      expect(err).not.to.be.instanceOf(ApiError);
      expect((err as Error).message).to.equal(message);
    }
  });
});
