import { defineResource, reached } from '../src/kernel/define.js';
import { date, idRef, moment, money, states } from '../src/kernel/fields.js';

export default defineResource({
  name: 'invoice',
  path: '/invoices',
  table: 'invoices',
  idPrefix: 'invoice_',
  description: 'A bill to a client: draft, open, then paid or void.',
  scopes: { read: 'read:invoices', write: 'write:invoices' },
  fields: {
    number: { type: 'string', minLength: 1, maxLength: 64, description: 'The invoice number as printed.', examples: ['INV-2026-0042'] },
    client_id: idRef('client_', 'The client billed.'),
    proposal_id: idRef('proposal_', 'The proposal this invoice bills.'),
    ...money(),
    status: states(['draft', 'open', 'paid', 'void'], 'draft', 'draft -> open | void; open -> paid | void.'),
    due_date: date('When payment is due.'),
    paid_at: moment('When the invoice was paid; set by the service.'),
  },
  required: ['number'],
  references: { client_id: 'client', proposal_id: 'proposal' },
  list: { sorts: ['created_at', 'updated_at'], filters: ['status', 'client_id', 'proposal_id'] },
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
