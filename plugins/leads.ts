import { defineResource, email, integer, isSet, states, text } from 'workspace-api/plugin';

const STATUSES = ['new', 'contacted', 'qualified', 'disqualified', 'converted'];

export default defineResource({
  name: 'lead',
  path: '/leads',
  table: 'leads',
  idPrefix: 'lead_',
  description: 'A prospective customer, scored 0-100.',
  fields: {
    name: text(200, { required: true, searchable: true, examples: ['Grace Hopper'] }),
    email: email(),
    company: text(200, { searchable: true, examples: ['Navy Labs'] }),
    source: text(100, { examples: ['website'] }),
    score: integer({ min: 0, max: 100, description: 'Lead score, 0-100.', examples: [72] }),
    status: states(STATUSES, 'new', 'Where the lead stands; moves freely.'),
  },
  state: { field: 'status', transitions: 'free' },
  events: {
    scored: { when: isSet('score'), description: 'A lead was given a score, or its score changed.' },
  },
});
