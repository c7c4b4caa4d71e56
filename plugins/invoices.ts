import { date, defineResource, moment, money, reached, ref, states, text } from 'workspace-api/plugin';

export default defineResource({
  name: 'invoice',
  path: '/invoices',
  table: 'invoices',
  idPrefix: 'invoice_',
  description: 'A bill to a client: draft, open, then paid or void.',
  fields: {
    number: text(64, { required: true, searchable: true, description: 'The invoice number as printed.', examples: ['INV-2026-0042'] }),
    client_id: ref('client', 'The client billed.'),
    proposal_id: ref('proposal', 'The proposal this invoice bills.'),
    ...money(),
    status: states(['draft', 'open', 'paid', 'void'], 'draft', 'draft -> open | void; open -> paid | void.'),
    due_date: date('When payment is due.'),
    paid_at: moment('When the invoice was paid; set by the service.'),
  },
  state: {
    field: 'status',
    transitions: { draft: ['open', 'void'], open: ['paid', 'void'], paid: [], void: [] },
    stamps: { paid: 'paid_at' },
  },
  events: {
    opened: { when: reached('status', 'open'), description: 'An invoice was opened (issued).' },
    paid: { when: reached('status', 'paid'), description: 'An invoice was paid.' },
    voided: { when: reached('status', 'void'), description: 'An invoice was voided.' },
  },
});
