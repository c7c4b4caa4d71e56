import { expect } from 'chai';
import { inValues, operatorFilters } from '../../src/kernel/query/filters.js';
import { kindOf } from '../../src/kernel/model/kinds.js';
import { boolean, datetime, defineResource, email, integer, money, ref, states, text } from '../../src/plugin.js';

const ticket = defineResource({
  name: 'ticket',
  path: '/tickets',
  table: 'tickets',
  idPrefix: 'tkt_',
  description: 'A support ticket.',
  fields: {
    title: text(200, { required: true }),
    tag: text(40),
    contact: email(),
    priority: integer({ min: 1, max: 5 }),
    price: money().amount,
    urgent: boolean(),
    due_at: datetime('When it is due.'),
    status: states(['open', 'closed'], 'open', 'Whether it is open.'),
    client_id: ref('client', 'The client who asked.'),
  },
  list: { filters: ['tag', 'status', 'client_id'] },
});
const fieldKinds = Object.fromEntries(Object.entries(ticket.fields).map(([f, s]) => [f, kindOf(s)!]));

describe('list operators from field kinds', () => {
  it('offers ranges on integer, money, datetime and the timestamps, [in] on states, refs, email and declared text filters', () => {
    const parameters = operatorFilters(ticket, fieldKinds).map((f) => f.parameter);
    const range = (field: string) => ['gt', 'gte', 'lt', 'lte'].map((o) => `${field}[${o}]`);
    expect(parameters).to.deep.equal([
      'tag[in]',
      'contact[in]',
      ...range('priority'),
      ...range('price'),
      ...range('due_at'),
      'status[in]',
      'client_id[in]',
      ...range('created_at'),
      ...range('updated_at'),
    ]);
  });

  it('checks every value of an [in] list against the field, and at most 50', () => {
    const status = operatorFilters(ticket, fieldKinds).find((f) => f.parameter === 'status[in]')!;
    expect(inValues(status, 'open,closed,open')).to.deep.equal({ values: ['open', 'closed'] });
    expect(inValues(status, 'open,shut')).to.deep.equal({ problem: 'has "shut", not one of open, closed' });
    expect(inValues(status, Array(51).fill('open').join(','))).to.deep.equal({ problem: 'takes at most 50 values, not 51' });
    const tag = operatorFilters(ticket, fieldKinds).find((f) => f.parameter === 'tag[in]')!;
    expect(inValues(tag, `a,${'x'.repeat(41)}`)).to.deep.equal({ problem: 'has a value longer than 40 characters' });
  });
});

describe('declared filters', () => {
  it('take a text of at most 255 characters, an email, a boolean, a state or a reference, and refuse a long text or a number', () => {
    const declare = (filter: string) => () =>
      defineResource({
        name: 'note',
        path: '/notes',
        table: 'notes',
        idPrefix: 'note_',
        description: 'A note.',
        fields: { title: text(200, { required: true }), body: text(5000), contact: email(), size: integer({ min: 0, max: 10 }), pinned: boolean({ default: false }) },
        list: { filters: [filter] },
      });
    expect(declare('title')).not.to.throw();
    expect(declare('contact')).not.to.throw();
    expect(declare('pinned')).not.to.throw();
    expect(declare('body')).to.throw('filter "body" must be the state field, a reference, an email, a boolean or a text of at most 255 characters');
    expect(declare('size')).to.throw('filter "size" must be');
  });
});
