import { unexplainedRows } from './mysql-rows';

describe('MySQL holds no row the run did not make (mysql-rows.ts)', () => {
  const made = { saleIds: new Set(['7']), userIds: new Set(['u_known']) };
  const guest = (id: string) => [
    { table: 'users', row: { id } },
    { table: 'guest_names', row: { user_id: id, name: `Guest ${id}` } },
  ];

  it("explains the explorer's sales and buyers, and nobody else's", () => {
    const added = [{ table: 'orders', row: { sale_id: '7', user_id: 'u_known' } }, ...guest('u_stranger')];
    expect(unexplainedRows(added, made, new Set())).toEqual([
      expect.objectContaining({ detail: expect.stringContaining('1 new row(s) in users') }),
      expect.objectContaining({ detail: expect.stringContaining('1 new row(s) in guest_names') }),
    ]);
  });

  it('explains one unknown guest (both their rows) per sign-in whose answer never came, and no more', () => {
    expect(unexplainedRows(guest('u_a'), { ...made, unansweredSignIns: 1 }, new Set())).toEqual([]);
    const two = unexplainedRows([...guest('u_a'), ...guest('u_b')], { ...made, unansweredSignIns: 1 }, new Set());
    expect(two.map((violation) => violation.detail)).toEqual([
      expect.stringContaining('u_b'),
      expect.stringContaining('u_b'),
    ]);
    // A row that names another sale is never a sign-in's.
    const order = [{ table: 'orders', row: { sale_id: '99', user_id: 'u_a' } }];
    expect(unexplainedRows(order, { ...made, unansweredSignIns: 1 }, new Set())).toHaveLength(1);
  });

  it("counts over the exploration: an earlier run's unanswered sign-in explains a guest that appears later, once", () => {
    const unknownGuests = new Set<string>();
    expect(unexplainedRows([], { ...made, unansweredSignIns: 1, unknownGuests }, new Set())).toEqual([]);
    expect(unexplainedRows(guest('u_late'), { ...made, unansweredSignIns: 1, unknownGuests }, new Set())).toEqual([]);
    expect(unknownGuests).toEqual(new Set(['u_late']));
    // That sign-in is spent: another unknown guest in a still later run is a violation.
    expect(unexplainedRows(guest('u_other'), { ...made, unansweredSignIns: 1, unknownGuests }, new Set())).toHaveLength(
      2,
    );
  });
});
