import { changed, defineResource } from '../src/kernel/define.js';
import { date, idRef, money, states, text } from '../src/kernel/fields.js';

const STAGES = ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];

export default defineResource({
  name: 'deal',
  path: '/deals',
  table: 'deals',
  idPrefix: 'deal_',
  description: 'A sales opportunity moving through stages.',
  scopes: { read: 'read:deals', write: 'write:deals' },
  fields: {
    title: text(200, { required: true, examples: ['Website redesign'] }),
    ...money(),
    stage: states(STAGES, 'lead', 'Where the deal stands; moves freely.'),
    client_id: idRef('client_', 'The client this deal is with.'),
    expected_close_date: date('When the deal is expected to close.'),
  },
  required: ['title'],
  references: { client_id: 'client' },
  list: { sorts: ['created_at', 'updated_at'], filters: ['stage', 'client_id'] },
  state: { field: 'stage', transitions: 'free' },
  events: {
    stage_changed: { when: changed('stage'), description: 'A deal moved to another stage.' },
  },
});
