/**
 * A plugin of the plugin API's first form (0.1.0), as the README first taught it, kept as it was
 * written: relative imports of the kernel, idRef() beside `references`, `required` and
 * `scopes` spelt out, and a migration of its own (beside it) that makes `title` a varchar(300).
 * The compatibility test copies it beside plugins/, where its imports read '../src/'.
 * Never modernise this file: it is the promise that such a plugin keeps working.
 */
import { defineResource, reached } from '../../../src/kernel/define.js';
import { idRef, text } from '../../../src/kernel/fields.js';

export default defineResource({
  name: 'ticket', path: '/tickets', table: 'tickets', idPrefix: 'ticket_',
  description: 'A support ticket, optionally from a client.',
  scopes: { read: 'read:tickets', write: 'write:tickets' },
  fields: {
    title: text(300, { required: true, examples: ['The printer is on fire'] }),
    client_id: idRef('client_', 'The client who opened it.'),
    urgent: { type: 'boolean', default: false, description: 'Urgent tickets are answered first.' },
  },
  required: ['title'],
  references: { client_id: 'client' },
  list: { sorts: ['created_at', 'updated_at'], filters: ['client_id'] },
  events: { escalated: { when: reached('urgent', true), description: 'A ticket became urgent.' } },
});
