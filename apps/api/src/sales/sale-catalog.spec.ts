import type { SaleRepository } from '@flash-sale/db';
import type { SaleDefinition } from '@flash-sale/domain';
import { SaleCatalog } from './sale-catalog';

/** A repository whose reads answer when the test says, with the definition MySQL held when each began. */
function repository() {
  let current = { id: '7', name: 'before the edit' } as SaleDefinition;
  const pending: (() => void)[] = [];
  const sales = {
    findById: (id: string) => {
      const answer = { ...current, id };
      return new Promise<SaleDefinition>((resolve) => pending.push(() => resolve(answer)));
    },
  } as unknown as SaleRepository;
  return {
    sales,
    edit: (name: string) => (current = { ...current, name }),
    answerAll: () => pending.splice(0).forEach((answer) => answer()),
  };
}

describe('SaleCatalog', () => {
  it('a read that began before an edit neither answers a later get nor fills the cache with the old sale', async () => {
    const mysql = repository();
    const catalog = new SaleCatalog(mysql.sales);
    const before = catalog.get('7'); // in flight when the admin edits
    mysql.edit('after the edit');
    catalog.forget('7');
    const after = catalog.get('7');
    mysql.answerAll();
    expect((await before).name).toBe('before the edit');
    expect((await after).name).toBe('after the edit');
    expect(catalog.peek('7')?.name).toBe('after the edit');
  });
});
