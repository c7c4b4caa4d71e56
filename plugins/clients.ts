import { defineResource, email, text } from 'workspace-api/plugin';

export default defineResource({
  name: 'client',
  path: '/clients',
  table: 'clients',
  idPrefix: 'client_',
  description: 'A customer of the workspace.',
  fields: {
    name: text(200, { required: true, searchable: true, examples: ['Acme GmbH'] }),
    email: email(),
    phone: text(40, { pattern: '^[0-9+()./ -]{3,40}$', examples: ['+49 30 1234567'] }),
    company: text(200, { searchable: true, examples: ['Acme Group'] }),
  },
});
