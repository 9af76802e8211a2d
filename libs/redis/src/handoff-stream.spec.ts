import { parseHandoffValue } from './handoff-stream';

describe('parseHandoffValue (the hand-off entry reserve-9.lua writes)', () => {
  it('reads every field of an entry', () => {
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|2|1|1763900000123|3|tok.en')).toEqual({
      orderNo: 'S7-01ABC',
      saleId: '7',
      userId: 'u_42',
      quantity: 2,
      slot: 1,
      reservedAt: new Date(1763900000123),
      epoch: 3,
      submitToken: 'tok.en',
    });
  });

  it('keeps a token that contains the separator whole (the token is the last field)', () => {
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|1|1763900000123|3|a|b|c')?.submitToken).toBe('a|b|c');
  });

  it('carries the bucket of a sale with several, and reads an empty token as none', () => {
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|2|1763900000123|3|t', 2)).toMatchObject({ bucket: 2, slot: 2 });
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|2|1763900000123|3|t')).not.toHaveProperty('bucket');
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|1|1763900000123||')).toMatchObject({ epoch: 0, submitToken: null });
  });

  it('refuses an entry it cannot trust rather than writing a wrong order', () => {
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|1|1763900000123|3')).toBeUndefined(); // no token field
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|0|1|1763900000123|3|t')).toBeUndefined(); // no units
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|x|1|1763900000123|3|t')).toBeUndefined();
    expect(parseHandoffValue('7', '|u_42|1|1|1763900000123|3|t')).toBeUndefined(); // no order number
    expect(parseHandoffValue('7', 'S7-01ABC|u_42|1|1|soon|3|t')).toBeUndefined();
  });
});
