import { saleIdOfOrderNumber } from '@flash-sale/domain';
import { decodeTime } from 'ulid';
import { SubmitTokenCodec } from './submit-token-codec';

describe('SubmitTokenCodec', () => {
  const codec = new SubmitTokenCodec('a-jwt-secret-long-enough-for-the-test');
  const inAMinute = Date.now() + 60_000;

  it('verifies what it encodes, for that sale and user only, until it expires', () => {
    const token = codec.encode(SubmitTokenCodec.claims('7', 'u-1', inAMinute));
    expect(codec.verify(token, '7', 'u-1')).toBe(true);
    expect(codec.verify(token, '8', 'u-1')).toBe(false);
    expect(codec.verify(token, '7', 'u-2')).toBe(false);
    expect(codec.verify(token, '7', 'u-1', inAMinute)).toBe(false);
  });

  it('refuses a token signed with another secret, or with its claims changed', () => {
    const token = codec.encode(SubmitTokenCodec.claims('7', 'u-1', inAMinute));
    expect(new SubmitTokenCodec('another-secret').verify(token, '7', 'u-1')).toBe(false);
    const [, signature] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ s: '7', u: 'u-2', e: inAMinute, n: 'x' })).toString('base64url')}.${signature}`;
    expect(codec.verify(forged, '7', 'u-2')).toBe(false);
    expect(codec.verify(`${token}.extra`, '7', 'u-1')).toBe(false);
  });

  it('decodes the claims, and nothing from garbage', () => {
    const claims = SubmitTokenCodec.claims('7', 'u-1', inAMinute);
    expect(SubmitTokenCodec.decode(codec.encode(claims))).toEqual(claims);
    expect(SubmitTokenCodec.decode('not a token')).toBeUndefined();
  });

  it('gives each token one order number of its own: the same every time and on every process, unguessable', () => {
    const claims = SubmitTokenCodec.claims('7', 'u-1', inAMinute);
    const token = codec.encode(claims);
    const number = codec.orderNumberOf(token, '7');
    expect(saleIdOfOrderNumber(number)).toBe('7');
    expect(decodeTime(number.slice(3))).toBe(inAMinute);
    expect(number.slice(-16)).toBe(claims.o);
    expect(codec.orderNumberOf(token, '7')).toBe(number);
    expect(new SubmitTokenCodec('a-jwt-secret-long-enough-for-the-test').orderNumberOf(token, '7')).toBe(number);
    const others = Array.from({ length: 200 }, () =>
      codec.orderNumberOf(codec.encode(SubmitTokenCodec.claims('7', 'u-1', inAMinute)), '7'),
    );
    expect(new Set([number, ...others]).size).toBe(201);
    expect(saleIdOfOrderNumber(codec.orderNumberOf('garbage', '7'))).toBe('7');
  });

  it('keeps the number a token signed before `o` existed was promised: derived from an HMAC of the token', () => {
    // Signed by the previous version (nonce `n`, no `o`); its number as that version computed it.
    const signedBefore =
      'eyJzIjoiNyIsInUiOiJ1LTEiLCJlIjoxODkzNDU2MDAwMDAwLCJuIjoiQUFFQ0F3UUZCZ2NJIn0.3AzftmbDPf7zCO5h88GLEkZ98m2LqkmaUq4T6eV7dp4';
    expect(codec.verify(signedBefore, '7', 'u-1', 1_893_455_000_000)).toBe(true);
    expect(codec.orderNumberOf(signedBefore, '7')).toBe('S7-01Q3DCBD00TA064TBXTEANVDV6');
    expect(new SubmitTokenCodec('another-secret').orderNumberOf(signedBefore, '7')).not.toBe(
      'S7-01Q3DCBD00TA064TBXTEANVDV6',
    );
  });

  it('derives the number of a token whose `o` is not a ULID random part as for a token without one', () => {
    const odd = codec.encode({ s: '7', u: 'u-1', e: inAMinute, o: 'not|an order part' });
    expect(saleIdOfOrderNumber(codec.orderNumberOf(odd, '7'))).toBe('7');
    expect(codec.orderNumberOf(odd, '7')).not.toContain('|');
  });

  it("gives every token its own order number's random part", () => {
    expect(SubmitTokenCodec.claims('7', 'u-1', inAMinute).o).not.toBe(SubmitTokenCodec.claims('7', 'u-1', inAMinute).o);
  });
});
