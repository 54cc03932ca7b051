import { canonicalJson } from '@trellis/core';
import { describe, expect, it } from 'vitest';

describe('canonical JSON (RFC 8785)', () => {
  it('reproduces the example of RFC 8785 §3.2.2', () => {
    const input = JSON.parse(String.raw`{
      "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }`);
    expect(canonicalJson(input)).toBe(
      String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
    );
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 §3.2.3 shows', () => {
    const input = JSON.parse(String.raw`{
      "\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"
    }`);
    // Compared as text: Object.keys would list the integer-like key "1" first whatever the order.
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('puts a surrogate-pair key before a BMP key above U+D800 (code units, not code points)', () => {
    // By code point U+1F600 sorts after U+FB01; by UTF-16 code unit 0xD83D sorts before 0xFB01.
    expect(canonicalJson({ '\ufb01': 1, '\u{1F600}': 2 })).toBe('{"\u{1F600}":2,"\ufb01":1}');
  });

  it('sorts by code unit, not by locale: upper case before lower case', () => {
    expect(canonicalJson({ b: 1, a: 2, B: 3, aa: 4, '': 5 })).toBe('{"":5,"B":3,"a":2,"aa":4,"b":1}');
  });

  it('sorts nested objects and keeps array order', () => {
    expect(canonicalJson({ z: [{ b: 1, a: 2 }, 3, 'x'], a: { d: null, c: true } })).toBe(
      '{"a":{"c":true,"d":null},"z":[{"a":2,"b":1},3,"x"]}',
    );
  });

  it('writes no whitespace', () => {
    expect(canonicalJson({ a: [1, 2, { b: 'c d' }] })).toBe('{"a":[1,2,{"b":"c d"}]}');
  });

  it.each([
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [-0, '0'],
    [0, '0'],
    [0.1, '0.1'],
    [1e-7, '1e-7'],
    [1e-6, '0.000001'],
    [Number.parseFloat('1E-7'), '1e-7'],
    [4.5, '4.5'],
    [-1.5e-10, '-1.5e-10'],
    [9007199254740992, '9007199254740992'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [5e-324, '5e-324'],
    [123456789012345680000, '123456789012345680000'],
  ])('writes the number %d as %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
    expect(canonicalJson([value])).toBe(`[${text}]`);
  });

  it('refuses NaN and the infinities', () => {
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
    expect(() => canonicalJson({ a: Number.POSITIVE_INFINITY })).toThrow(TypeError);
    expect(() => canonicalJson([Number.NEGATIVE_INFINITY])).toThrow(TypeError);
  });

  it('escapes strings as JSON does, with lower-case \\u escapes and nothing else escaped', () => {
    expect(canonicalJson('\u0000\u0008\t\n\u000b\f\r\u001f"\\/')).toBe(String.raw`"\u0000\b\t\n\u000b\f\r\u001f\"\\/"`);
    expect(canonicalJson('é€😀\u007f')).toBe('"é€😀\u007f"');
  });

  it('escapes keys too', () => {
    expect(canonicalJson({ 'a"b': 1, 'tab\t': 2 })).toBe(String.raw`{"a\"b":1,"tab\t":2}`);
  });

  it('writes literals', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson(false)).toBe('false');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('drops undefined members and writes undefined array items as null, as JSON does', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('refuses values JSON cannot hold', () => {
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
    expect(() => canonicalJson(Symbol('s'))).toThrow(TypeError);
    expect(() => canonicalJson(10n)).toThrow(TypeError);
    expect(() => canonicalJson({ a: undefined, b: [1, { c: () => 1 }] })).toThrow(TypeError);
  });

  it('gives the same text for the same data whatever the key order', () => {
    const a = { source: { type: 'git', url: 'u', ref: null }, variables: { x: 1, y: [1, 2] } };
    const b = { variables: { y: [1, 2], x: 1 }, source: { ref: null, url: 'u', type: 'git' } };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
  });

  it('round-trips through JSON.parse', () => {
    const value = { b: [1, 'two', { three: 3.5 }], a: '\u2028\u2029', c: { '': null } };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });
});
