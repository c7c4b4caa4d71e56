/**
 * A plugin of the plugin API's second form (0.1.0, from section 13 of the reference): one file
 * importing 'workspace-api/plugin', its migration written by `npm run migrate:make` (beside it,
 * as the tool wrote it on 0.1.0). Never modernise either file: they are the promise that such a
 * plugin keeps working.
 */
import { boolean, datetime, defineResource, email, integer, money, reached, ref, states, text } from 'workspace-api/plugin';

export default defineResource({
  name: 'visit',
  path: '/visits',
  table: 'visits',
  idPrefix: 'visit_',
  description: 'A visit to a client.',
  fields: {
    subject: text(300, { required: true, searchable: true, examples: ['Quarterly review'] }),
    contact: email({ description: 'Who to ask for.' }),
    attendees: integer({ min: 1, max: 50, description: 'How many come.' }),
    ...money(),
    at: datetime('When it takes place.'),
    confirmed: boolean({ default: false, description: 'Whether the client confirmed.' }),
    status: states(['planned', 'done', 'cancelled'], 'planned', 'planned -> done | cancelled'),
    client_id: ref('client', 'The client visited.'),
  },
  state: { field: 'status', transitions: { planned: ['done', 'cancelled'], done: [], cancelled: [] } },
  validate: ({ input }) => (input.subject === 'nothing' ? [{ pointer: '/subject', detail: 'must say what the visit is about' }] : []),
  events: { confirmed: { when: reached('confirmed', true), description: 'A client confirmed a visit.' } },
  actions: {
    confirm: { summary: 'Confirm a visit', handle: ({ update }) => update({ confirmed: true }) },
  },
});
