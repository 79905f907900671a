#!/usr/bin/env python3
"""Independent re-implementation of the keyspec encoding (docs/keyspec.md), stdlib only.

Checks that every case in the test-vector files encodes to its expected hex. With --update it
(re)writes the expected hex of cases from this implementation instead; the C++ tests then check
the C++ library against the same files, so the two implementations are held to one definition.

usage: check_key_vectors.py [--update] FILE.json...
"""
import datetime
import hashlib
import json
import struct
import sys

LONG_MAX = 2**63 - 1
MASK64 = 2**64 - 1

# --- XXH64 (seed 0), per the xxHash specification -------------------------------------------
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                      0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK64


def _round(acc, lane):
    acc = (acc + lane * P2) & MASK64
    return (_rotl(acc, 31) * P1) & MASK64


def _merge(acc, val):
    acc ^= _round(0, val)
    return (acc * P1 + P4) & MASK64


def xxh64(data, seed=0):
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & MASK64, (seed + P2) & MASK64, seed, (seed - P1) & MASK64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = _round(v[k], struct.unpack_from('<Q', data, i + 8 * k)[0])
            i += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & MASK64
        for k in range(4):
            h = _merge(h, v[k])
    else:
        h = (seed + P5) & MASK64
    h = (h + n) & MASK64
    while i + 8 <= n:
        h ^= _round(0, struct.unpack_from('<Q', data, i)[0])
        h = (_rotl(h, 27) * P1 + P4) & MASK64
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from('<I', data, i)[0] * P1) & MASK64
        h = (_rotl(h, 23) * P2 + P3) & MASK64
        i += 4
    while i < n:
        h ^= (data[i] * P5) & MASK64
        h = (_rotl(h, 11) * P1) & MASK64
        i += 1
    h ^= h >> 33
    h = (h * P2) & MASK64
    h ^= h >> 29
    h = (h * P3) & MASK64
    return h ^ (h >> 32)


# --- values ----------------------------------------------------------------------------------
class KeyError_(Exception):
    pass


def parse_source(text):
    prefix, _, rest = text.partition(':')
    if not _:
        prefix, rest = 'kafka', text
    if prefix == 'field':
        return ('field', rest)
    if prefix == 'kafka' and rest in ('partition', 'offset', 'timestamp', 'topic'):
        return ('kafka', rest)
    raise ValueError('bad input ' + text)


def comp_source(c):
    if 'field' in c:
        return ('field', c['field'])
    if 'kafka' in c:
        return ('kafka', c['kafka'])
    return None


def read(src, event, meta):
    kind, name = src
    if kind == 'field':
        if name not in event:
            raise KeyError_('missing ' + name)
        return event[name]
    if name == 'timestamp' and meta.get('timestamp_ms', -1) < 0:
        raise KeyError_('missing kafka timestamp')
    return {'partition': meta.get('partition', 0), 'offset': meta.get('offset', 0),
            'timestamp': meta.get('timestamp_ms', -1), 'topic': meta.get('topic', '')}[name]


def text_of(v):
    if isinstance(v, bool):
        return b'true' if v else b'false'
    if isinstance(v, int):
        return str(v).encode()
    if isinstance(v, str):
        return v.encode('utf-8')
    raise KeyError_('wrong type')


def as_int(v):
    if isinstance(v, bool):
        raise KeyError_('wrong type')
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v, 10)
        except ValueError:
            pass
    raise KeyError_('wrong type')


def rfc3339_ms(s):
    t = s.replace('t', 'T').replace('z', 'Z').replace(' ', 'T', 1)
    frac = 0
    main, zone = t[:19], t[19:]
    if zone.startswith('.'):
        digits = ''
        k = 1
        while k < len(zone) and zone[k].isdigit():
            digits += zone[k]
            k += 1
        frac = int((digits + '00')[:3])
        zone = zone[k:]
    base = datetime.datetime.strptime(main, '%Y-%m-%dT%H:%M:%S').replace(tzinfo=datetime.timezone.utc)
    offset = 0
    if zone != 'Z':
        sign = -1 if zone[0] == '-' else 1
        offset = sign * (int(zone[1:3]) * 60 + int(zone[4:6]))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    days = (base - epoch).days
    secs = (base - epoch).seconds
    return (days * 86400 + secs) * 1000 + frac - offset * 60000


def time_ms(v, mode):
    if isinstance(v, str) and (mode == 'rfc3339' or mode == 'auto'):
        try:
            n = int(v, 10)
        except ValueError:
            return rfc3339_ms(v)
        v = n
    if isinstance(v, float) and not v.is_integer():
        secs = mode == 'epoch_s' or (mode == 'auto' and abs(v) < 1e11)
        return int(v * 1000 // 1) if secs else int(v // 1)
    n = as_int(v)
    if mode == 'epoch_s' or (mode == 'auto' and -10**11 < n < 10**11):
        return n * 1000
    return n


# --- time patterns ---------------------------------------------------------------------------
LETTERS = {'y': ('Y', 4), 'M': ('m', 2), 'd': ('d', 2), 'H': ('H', 2), 'm': ('M', 2), 's': ('S', 2), 'S': ('L', 3)}


def tokens(pattern):
    out, i = [], 0
    strftime_style = '%' in pattern  # then letters outside %-fields are literals
    while i < len(pattern):
        c = pattern[i]
        if strftime_style and c != '%':
            out.append(('lit', c))
            i += 1
        elif c == '%':
            f = pattern[i + 1]
            out.append(('lit', '%') if f == '%' else (f, 4 if f == 'Y' else 3 if f == 'L' else 2))
            i += 2
        elif c == "'":
            j = pattern.index("'", i + 1)
            out.extend(('lit', ch) for ch in pattern[i + 1:j])
            i = j + 1
        elif c in LETTERS:
            run = len(pattern[i:]) - len(pattern[i:].lstrip(c))
            out.append(LETTERS[c])
            i += run
        else:
            out.append(('lit', c))
            i += 1
    return out


def format_time(pattern, ms):
    epoch = datetime.datetime(1970, 1, 1)
    d = epoch + datetime.timedelta(milliseconds=ms)
    vals = {'Y': d.year, 'm': d.month, 'd': d.day, 'H': d.hour, 'M': d.minute, 'S': d.second,
            'L': d.microsecond // 1000}
    s = ''
    for kind, arg in tokens(pattern):
        s += arg if kind == 'lit' else str(vals[kind]).zfill(arg)
    return s.encode()


def be(n, width):
    return n.to_bytes(width, 'big')


# --- components ------------------------------------------------------------------------------
def hash_input(inputs, event, meta):
    parts = []
    for src in inputs:
        v = read(src, event, meta)
        if src == ('kafka', 'partition'):
            parts.append(be(v & 0xFFFFFFFF, 4))
        elif src in (('kafka', 'offset'), ('kafka', 'timestamp')):
            parts.append(be(v & MASK64, 8))
        else:
            parts.append(text_of(v))
    return parts


def lead_width(c, values):
    return c.get('width', len(str(values - 1)))


def encode_lead(c, value, values):
    if c.get('encoding', 'text') == 'binary':
        return bytes([value])
    return str(value).zfill(lead_width(c, values)).encode()


def encode_component(c, event, meta):
    t = c['type']
    if t == 'salt':
        buckets = c.get('buckets', 100)
        parts = hash_input([parse_source(s) for s in c.get('of', ['kafka:partition', 'kafka:offset'])], event, meta)
        values, base = buckets, 0
        if 'month_of' in c:
            month = (datetime.datetime(1970, 1, 1) + datetime.timedelta(
                milliseconds=time_ms(read(parse_source(c['month_of']), event, meta), c.get('input', 'auto')))).month
            parts.append(b'%02d' % month)
            values, base = buckets * 12, (month - 1) * buckets
        return encode_lead(c, base + xxh64(b'\x00'.join(parts)) % buckets, values)
    if t == 'bucket':
        v = read(comp_source(c), event, meta)
        n = time_ms(v, c['input']) if 'input' in c else as_int(v)
        return encode_lead(c, n % c['buckets'], c['buckets'])
    if t in ('field', 'reverse', 'dict'):
        v = text_of(read(comp_source(c), event, meta))
        if t == 'dict':
            return c['values'][v.decode()].encode()
        if t == 'reverse':
            return v[::-1] + c.get('pad', '\x01').encode() * (c['width'] - len(v))
        if 'terminator' in c:
            return v + c['terminator'].encode()
        pad = c.get('pad', '\x01').encode() * (c['width'] - len(v))
        if len(v) > c['width']:
            raise KeyError_('too long')
        return pad + v if c.get('align') == 'right' else v + pad
    if t == 'hash':
        inputs = [parse_source(s) for s in c['of']] if 'of' in c else [('field', c['field'])]
        data = b'\x00'.join(hash_input(inputs, event, meta))
        algo = c.get('algorithm', 'md5')
        digest = be(xxh64(data), 8) if algo == 'xxh64' else hashlib.new(algo, data).digest()
        return digest[:c.get('bytes', len(digest))]
    if t == 'time':
        ms = time_ms(read(comp_source(c), event, meta), c.get('input', 'auto'))
        fmt = c.get('format', 'binary' if c.get('reversed') else 'yyyyMMddHHmmssSSS')
        stored = LONG_MAX - ms if c.get('reversed') else ms
        if fmt == 'binary':
            return be(stored, 8)
        if fmt == 'decimal':
            return str(stored).zfill(19).encode()
        return format_time(fmt, ms)
    if t in ('int', 'partition', 'offset'):
        src = comp_source(c) if t == 'int' else ('kafka', t)
        v = as_int(read(src, event, meta))
        binary = c.get('encoding', 'text') == 'binary'
        width = c.get('width', (8 if t != 'partition' else 4) if binary else (4 if t == 'partition' else 19))
        if binary:
            mx = 2**31 - 1 if width == 4 else LONG_MAX
            return be(mx - v if c.get('reversed') else v, width)
        mx = LONG_MAX if width >= 19 else 10**width - 1
        return str(mx - v if c.get('reversed') else v).zfill(width).encode()
    if t == 'literal':
        return c['value'].encode()
    raise ValueError('unknown component type ' + t)


def encode(spec, event, meta):
    return b''.join(encode_component(c, event, meta) for c in spec['components'])


def self_test():
    # Reference values from the xxHash project.
    assert xxh64(b'') == 0xEF46DB3751D8E999, hex(xxh64(b''))
    assert xxh64(b'a') == 0xD24EC4F1A98C6E5B, hex(xxh64(b'a'))
    assert xxh64(b'abc') == 0x44BC2CF5AD770999, hex(xxh64(b'abc'))


def main(argv):
    self_test()
    update = '--update' in argv
    files = [a for a in argv[1:] if a != '--update']
    failures = checked = 0
    for path in files:
        with open(path, encoding='utf-8') as f:
            doc = json.load(f)
        for case in doc['cases']:
            try:
                got = encode(case['spec'], case['event'], case.get('meta', {})).hex()
            except KeyError_ as e:
                got = 'error: ' + str(e)
            checked += 1
            if update:
                case['key_hex'] = got
            elif got != case['key_hex']:
                failures += 1
                print(f"FAIL {path}: {case['name']}: expected {case['key_hex']}, got {got}")
        if update:
            with open(path, 'w', encoding='utf-8') as f:
                json.dump(doc, f, indent=2, ensure_ascii=True)
                f.write('\n')
    print(f'{checked} vectors checked, {failures} failed')
    return 1 if failures or checked == 0 else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
