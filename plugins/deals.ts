import { changed, date, defineResource, money, ref, states, text } from 'workspace-api/plugin';

const STAGES = ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];

export default defineResource({
  name: 'deal',
  path: '/deals',
  table: 'deals',
  idPrefix: 'deal_',
  description: 'A sales opportunity moving through stages.',
  fields: {
    title: text(200, { required: true, searchable: true, examples: ['Website redesign'] }),
    ...money(),
    stage: states(STAGES, 'lead', 'Where the deal stands; moves freely.'),
    client_id: ref('client', 'The client this deal is with.'),
    expected_close_date: date('When the deal is expected to close.'),
  },
  state: { field: 'stage', transitions: 'free' },
  events: {
    stage_changed: { when: changed('stage'), description: 'A deal moved to another stage.' },
  },
});
