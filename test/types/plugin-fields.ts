/**
 * Type fixtures: `npm run typecheck` compiles this file, and each `@ts-expect-error` below fails
 * the check unless the line under it is a compile error. A plugin's fields type its hooks' and
 * actions' rows: a misspelt field, a state it does not have, a value of the wrong type, each is
 * an error where the plugin is written, not a 500 at run time.
 */
import { boolean, defineResource, integer, money, ref, states, text } from 'workspace-api/plugin';

export const typedPlugin = defineResource({
  name: 'chore',
  path: '/chores',
  table: 'chores',
  idPrefix: 'chore_',
  description: 'A fixture for the compiler only.',
  fields: {
    title: text(200, { required: true }),
    note: text(500),
    effort: integer({ min: 0, max: 100 }),
    done: boolean({ default: false }),
    status: states(['open', 'closed'], 'open', 'Open or closed.'),
    client_id: ref('client', 'Its client.'),
    ...money(),
  },
  validate: ({ input, before }) => {
    const title: string | undefined = input.title;
    const effort: number | null | undefined = input.effort ?? before?.effort;
    // @ts-expect-error -- a misspelt field of the input
    if (input.titel === 'x') return [];
    // @ts-expect-error -- a misspelt field of the object before the write
    if (before?.efort) return [];
    return title === 'boom' && effort === 1 ? [{ pointer: '/title', detail: 'no' }] : [];
  },
  beforeWrite: ({ row }) => {
    const done: boolean = row.done;
    const amount: number | null = row.amount;
    // @ts-expect-error -- a field that is not there
    void row.titel;
    // @ts-expect-error -- a text is not a number
    const wrong: number = row.title;
    void wrong;
    return { ...row, done: done || amount === 0, title: row.title.trim() };
  },
  actions: {
    close: {
      summary: 'Close it',
      body: { reason: text(200, { required: true }) },
      handle: ({ object, body, update }) => {
        const reason: string | undefined = body.reason;
        // @ts-expect-error -- a body field the action does not take
        void body.resaon;
        // @ts-expect-error -- a state the machine does not have
        void update({ status: 'clsoed' });
        return update({ status: 'closed', title: `${object.title} (${String(reason)})` });
      },
    },
    estimate: {
      summary: 'Set the effort',
      body: { effort: integer({ min: 0, max: 100 }) },
      // Returning the changes: held to the fields.
      handle: ({ body }) => ({ effort: body.effort }),
    },
  },
});
