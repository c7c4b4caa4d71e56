import { expect } from 'chai';
import { dialectOf } from '../../src/db/dialect.js';
import { migrationsDatabase } from '../helpers/backend.js';

const UNBOUND = '20261128000000_search_terms_unbound';

describe("search_terms' foreign key to workspaces, and its migration", () => {
  const storage = migrationsDatabase('termskey');

  const term = (workspace_id: string, term: string) => ({ workspace_id, resource: 'deal', term, created_at: 5, object_id: 'deal_1' });
  const terms = async () => (await storage.db('search_terms').orderBy('term').select('workspace_id', 'term')) as Array<{ workspace_id: string; term: string }>;
  /** Whether a term of a workspace that does not exist is written. */
  const takesOrphans = async (word: string) => {
    try {
      await storage.db('search_terms').insert(term('ws_gone', word));
      return true;
    } catch {
      return false;
    }
  };

  it('is gone on MySQL and PostgreSQL (kept on SQLite), and comes back on rollback without the terms it would refuse', async () => {
    const { db } = storage;
    const bound = dialectOf(db) === 'sqlite';
    await storage.latest();
    await db('workspaces').insert({ id: 'ws_k', name: 'k', plan: 'pro', created_at: 1, updated_at: 1 });
    await db('search_terms').insert(term('ws_k', 'acme'));
    expect(await takesOrphans('orphan')).to.equal(!bound);

    await storage.down(UNBOUND);
    // The workspace's term stays; one of a workspace that is no more could not stay under the key.
    expect(await terms()).to.deep.equal([{ workspace_id: 'ws_k', term: 'acme' }]);
    expect(await takesOrphans('again')).to.equal(false);

    await storage.latest();
    expect(await takesOrphans('third')).to.equal(!bound);
    expect((await terms()).map((t) => t.term)).to.deep.equal(bound ? ['acme'] : ['acme', 'third']);
  });
});
