import { expect } from 'chai';
import { parseRenames } from '../../src/kernel/storage/renames.js';

describe('migrate:make --rename', () => {
  it('reads table.old:new, given as two arguments or one, as often as asked', () => {
    expect(parseRenames(['--rename', 'badges.label:name', '--rename=tasks.title:headline'])).to.deep.equal({
      renames: [
        { table: 'badges', from: 'label', to: 'name' },
        { table: 'tasks', from: 'title', to: 'headline' },
      ],
    });
    expect(parseRenames([])).to.deep.equal({ renames: [] });
  });

  it('says what is wrong with anything else', () => {
    expect(parseRenames(['--rename'])).to.deep.equal({ problem: '--rename needs table.old:new' });
    expect(parseRenames(['--rename', 'label:name'])).to.deep.equal({ problem: '--rename label:name: write it as table.old_column:new_field, such as tasks.title:headline' });
    expect(parseRenames(['--rename', 'Badges.label:name'])).to.have.property('problem');
    expect(parseRenames(['--force'])).to.deep.equal({ problem: 'unknown argument --force' });
  });
});
