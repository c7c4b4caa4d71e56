import { defineResource, moment, money, reached, ref, states, text } from 'workspace-api/plugin';

export default defineResource({
  name: 'proposal',
  path: '/proposals',
  table: 'proposals',
  idPrefix: 'proposal_',
  description: 'An offer sent to a client: draft, then sent, then accepted or declined.',
  fields: {
    title: text(200, { required: true, searchable: true, examples: ['Redesign, phase 1'] }),
    deal_id: ref('deal', 'The deal this proposal belongs to.'),
    client_id: ref('client', 'The client the proposal is addressed to.'),
    ...money(),
    status: states(['draft', 'sent', 'accepted', 'declined'], 'draft', 'draft -> sent -> accepted | declined.'),
    sent_at: moment('When the proposal was sent; set by the service.'),
  },
  state: {
    field: 'status',
    transitions: { draft: ['sent'], sent: ['accepted', 'declined'], accepted: [], declined: [] },
    stamps: { sent: 'sent_at' },
  },
  events: {
    sent: { when: reached('status', 'sent'), description: 'A proposal was sent.' },
    accepted: { when: reached('status', 'accepted'), description: 'A proposal was accepted.' },
    declined: { when: reached('status', 'declined'), description: 'A proposal was declined.' },
  },
});
