import { expect } from 'chai';
import { defineResource, integer, isVersionDate, text } from '../../src/kernel/model/index.js';
import { PluginError } from '../../src/kernel/model/define.js';
import path from 'node:path';
import { loadRegistry } from '../../src/kernel/registry/index.js';
import { Versions } from '../../src/versions/index.js';
import { ROOT_DIR } from '../../src/common/config.js';
import { besidePlugins } from '../helpers/beside-plugins.js';
import type { ChangeDeclaration } from '../../src/kernel/model/changes.js';

/** The pure pieces of API versions (docs/reference.md section 19): declarations checked at boot, and the conversions. */

const base = {
  name: 'widget',
  path: '/widgets',
  table: 'widgets',
  idPrefix: 'wid_',
  description: 'A widget.',
  fields: { title: text(100, { required: true }), due_date: text(10), size_cm: integer({ min: 0 }) },
};

const declare = (changes: unknown) => defineResource({ ...base, changes: changes as ChangeDeclaration[] });

const refusal = (changes: unknown): string => {
  try {
    declare(changes);
  } catch (caught) {
    expect(caught).to.be.instanceOf(PluginError);
    return (caught as Error).message;
  }
  throw new Error('the declaration was accepted');
};

const RENAME = { version: '2027-01-15', description: 'deadline is now due_date', rename: { deadline: 'due_date' } };
const SIZE = {
  version: '2027-02-01',
  description: 'size is now size_cm',
  added: ['size_cm'],
  had: { size: text(20) },
  request: (body: Record<string, unknown>) => {
    const { size, ...rest } = body;
    return size === undefined ? body : { ...rest, size_cm: parseInt(String(size), 10) };
  },
  response: (object: Record<string, unknown>) => {
    const { size_cm, ...rest } = object;
    return { ...rest, size: size_cm == null ? null : `${String(size_cm)} cm` };
  },
};

describe('API versions: change declarations', () => {
  it('knows a date when it sees one', () => {
    expect(['2027-01-15', '2028-02-29'].every(isVersionDate)).to.equal(true);
    expect(['2027-1-15', '2027-02-29', '2027-13-01', 'latest', 20270115].some(isVersionDate)).to.equal(false);
  });

  it('accepts a rename and a change with code, each fitting the shape at its version', () => {
    expect(declare([RENAME, SIZE]).changes).to.have.length(2);
  });

  it('stops boot on a key it does not know, naming the nearest', () => {
    expect(refusal([{ ...RENAME, renam: {} }])).to.contain('"renam" is not a key it knows: did you mean "rename"?');
  });

  it('stops boot on a date that is not YYYY-MM-DD, or not after the first version', () => {
    expect(refusal([{ ...RENAME, version: '2027-1-15' }])).to.contain('must be a date written YYYY-MM-DD');
    expect(refusal([{ ...RENAME, version: '2026-11-21' }])).to.contain('must be after the first version, 2026-11-21');
  });

  it('stops boot on a rename or an added field the shape at that version does not have', () => {
    expect(refusal([{ ...RENAME, rename: { deadline: 'due_day' } }])).to.contain('renames "deadline" to "due_day", which is not a field at that version');
    // Newest first: once 2027-02-01 took size_cm away, the older change cannot rename to it.
    expect(refusal([SIZE, { ...RENAME, rename: { width: 'size_cm' } }])).to.contain('"size_cm", which is not a field at that version');
    expect(refusal([{ ...SIZE, added: ['weight'] }])).to.contain('adds "weight", which is not a field at that version');
  });

  it('stops boot on a change that renames and converts at once, changes nothing, or had fields without response()', () => {
    expect(refusal([{ ...RENAME, response: (o: unknown) => o }])).to.contain('renames and converts with code');
    expect(refusal([{ version: '2027-01-15', description: 'nothing' }])).to.contain('changes nothing');
    expect(refusal([{ ...SIZE, response: undefined }])).to.contain('needs response()');
  });
});

describe('API versions: conversions (the gadgets fixture beside the shipped plugins)', () => {
  let versions: Versions;
  let folders: ReturnType<typeof besidePlugins>;

  before(async () => {
    folders = besidePlugins('unit-versions');
    folders.place(path.join(ROOT_DIR, 'test', 'versions', 'gadgets', 'gadgets.ts'));
    versions = new Versions(await loadRegistry(folders.plugins, { checkSchemas: false }));
  });
  after(() => folders?.remove());

  it('lists the first version and each declared date, with the latest last', () => {
    expect(versions.known).to.deep.equal(['2026-11-21', '2027-01-15', '2027-02-01']);
    expect(versions.latest).to.equal('2027-02-01');
    expect(versions.since('2027-01-15').map((v) => v.version)).to.deep.equal(['2027-02-01']);
  });

  it('converts nothing at the latest version, nor for a resource that never changed', () => {
    const object = { id: 'gad_1', label: 'A', close_date: '2027-05-01', size_cm: 3 };
    expect(versions.objectDown('gadget', object, '2027-02-01')).to.equal(object);
    const deal = { id: 'deal_1', title: 'D' };
    expect(versions.objectDown('deal', deal, '2026-11-21')).to.equal(deal);
  });

  it('brings an object down through every newer change, keeping its order', () => {
    const at = '2026-12-02T12:00:00.000Z';
    const object = { id: 'gad_1', label: 'A', close_date: '2027-05-01', owner_email: null, size_cm: 3, client_id: null, status: 'open', created_at: at, updated_at: at, version: 1, livemode: false };
    expect(versions.objectDown('gadget', object, '2027-01-15')).to.deep.equal({ id: 'gad_1', label: 'A', close_date: '2027-05-01', owner_email: null, client_id: null, status: 'open', size: '3 cm', created_at: at, updated_at: at, version: 1, livemode: false });
    expect(Object.keys(versions.objectDown('gadget', object, '2026-11-21'))).to.deep.equal(['id', 'label', 'expected_close_date', 'contact_email', 'client_id', 'status', 'size', 'created_at', 'updated_at', 'version', 'livemode']);
    // The object given is left as it was: the plugin's code changed a copy.
    expect(object).to.have.property('size_cm', 3).and.not.have.property('size');
    // An object with an expansion beside its fields comes down key by key, the expansion kept.
    const expanded = versions.objectDown('gadget', { ...object, client: null }, '2026-11-21');
    expect(expanded).to.include({ expected_close_date: '2027-05-01', size: '3 cm', client: null }).and.not.have.property('size_cm');
  });

  it('takes a body up, a query by the older names up, and says pointers and parameters by the older names', () => {
    const conversion = versions.shapeAt('gadget', '2026-11-21')!.conversion;
    expect(conversion.bodyUp({ label: 'A', expected_close_date: '2027-05-01', size: '12' })).to.deep.equal({ label: 'A', close_date: '2027-05-01', size_cm: 12 });
    expect(conversion.queryUp({ 'expected_close_date[lt]': '2027-01-01', sort: '-expected_close_date', limit: 5 })).to.deep.equal({ 'close_date[lt]': '2027-01-01', sort: '-close_date', limit: 5 });
    expect(conversion.pointerDown('/close_date')).to.equal('/expected_close_date');
    expect(conversion.pointerDown('/data/3/owner_email')).to.equal('/data/3/contact_email');
    expect(conversion.pointerDown('/size_cm')).to.equal('/size');
    expect(conversion.parameterDown('close_date[gte]')).to.equal('expected_close_date[gte]');
    // Renames alone for an action's body: its own fields are not the resource's to convert by code.
    expect(conversion.renameUp({ expected_close_date: '2027-05-01', size: '3' })).to.deep.equal({ close_date: '2027-05-01', size: '3' });
  });

  it("renders an event's previous values down to the fields they stand for alone", () => {
    const event = JSON.stringify({ id: 'evt_1', type: 'gadget.updated', data: { object: { id: 'gad_1', label: 'B', close_date: null, size_cm: 4 }, previous: { label: 'A' } } });
    const older = JSON.parse(versions.eventDown(event, '2026-11-21')) as { data: { object: Record<string, unknown>; previous: Record<string, unknown> } };
    expect(older.data.previous).to.deep.equal({ label: 'A' });
    expect(older.data.object).to.include({ expected_close_date: null, size: '4 cm' });
    const resized = JSON.stringify({ id: 'evt_2', type: 'gadget.updated', data: { object: { id: 'gad_1', size_cm: 5 }, previous: { size_cm: 4 } } });
    expect((JSON.parse(versions.eventDown(resized, '2026-11-21')) as { data: { previous: unknown } }).data.previous).to.deep.equal({ size: '4 cm' });
    expect(versions.eventDown(event, '2027-02-01')).to.equal(event);
  });
});
