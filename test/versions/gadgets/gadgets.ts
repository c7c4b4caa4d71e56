/**
 * A plugin whose shape changed twice (docs/plugins.md, "Changing a resource's shape"): in
 * 2027-01-15 two fields were renamed, and in 2027-02-01 `size` (a text such as "12 cm")
 * became `size_cm` (an integer), converted by code. Its fields are the latest shape.
 */
import { date, defineResource, email, integer, ref, states, text } from 'workspace-api/plugin';

/** "12 cm", "12cm", "12" -> 12; anything else -> undefined. */
const centimetres = (size: unknown): number | undefined => {
  const match = typeof size === 'string' ? /^\s*(\d{1,5})\s*(cm)?\s*$/.exec(size) : null;
  return match ? Number(match[1]) : undefined;
};

export default defineResource({
  name: 'gadget',
  path: '/gadgets',
  table: 'gadgets',
  idPrefix: 'gad_',
  description: 'A gadget whose shape changed in two API versions.',
  fields: {
    label: text(100, { required: true, searchable: true, examples: ['Lamp'] }),
    close_date: date('When it closes.'),
    owner_email: email(),
    size_cm: integer({ min: 0, max: 99999, description: 'Its size in whole centimetres.' }),
    client_id: ref('client', 'The client it belongs to.'),
    status: states(['open', 'closed'], 'open', 'open or closed; moves freely.'),
  },
  state: { field: 'status', transitions: 'free' },
  actions: {
    close: {
      summary: 'Close the gadget',
      body: { close_date: date('When it closed.') },
      handle: ({ body }) => ({ status: 'closed', ...(body.close_date ? { close_date: body.close_date } : {}) }),
    },
  },
  validate: ({ input }) => (input.close_date === '2000-01-01' ? [{ pointer: '/close_date', detail: 'is before the gadget existed' }] : []),
  changes: [
    {
      version: '2027-01-15',
      description: 'expected_close_date is now close_date; contact_email is now owner_email.',
      rename: { expected_close_date: 'close_date', contact_email: 'owner_email' },
    },
    {
      version: '2027-02-01',
      description: 'size (a text such as "12 cm") is now size_cm, a whole number of centimetres.',
      added: ['size_cm'],
      had: { size: text(20, { description: 'Its size, such as "12 cm".' }) },
      request(body) {
        if (!('size' in body)) return body;
        const { size, ...rest } = body;
        return { ...rest, size_cm: size === null ? null : (centimetres(size) ?? -1) };
      },
      // The object is response's own to change; size_cm, in `added`, is left out of the older one for it.
      response(object) {
        object.size = object.size_cm === null || object.size_cm === undefined ? null : `${String(object.size_cm)} cm`;
        return object;
      },
    },
  ],
});
