import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import * as packet from 'dns-packet';
import type { DecodedPacket, Packet, RecordType, StringAnswer } from 'dns-packet';
import { startDnsServer, type DnsTestServer } from './support/dns-server.js';

let dns: DnsTestServer;

test.before(async () => {
  dns = await startDnsServer();
});

test.after(async () => {
  await dns.close();
});

type Decoded = DecodedPacket & { rcode?: string };

let nextId = 1;
function query(name: string, type: RecordType, extra: Partial<Packet> = {}): Packet {
  return { id: nextId++, type: 'query', flags: packet.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }], ...extra };
}

/** Sends raw bytes over UDP; resolves to the decoded reply, or null when none came within `waitMs`. */
async function udpRaw(message: Buffer, waitMs = 500): Promise<Decoded | null> {
  const socket = createSocket('udp4');
  try {
    const reply = once(socket, 'message').then(([msg]) => packet.decode(msg as Buffer) as Decoded);
    socket.send(message, dns.port, dns.host);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), waitMs);
    });
    const result = await Promise.race([reply, timeout]);
    clearTimeout(timer);
    return result;
  } finally {
    socket.close();
  }
}

async function udp(q: Packet): Promise<Decoded> {
  const reply = await udpRaw(packet.encode(q));
  if (reply === null) throw new Error('no UDP reply');
  return reply;
}

/** Reads `count` length-prefixed DNS messages from a TCP stream. */
async function readTcp(socket: Socket, count: number): Promise<Decoded[]> {
  socket.setTimeout(2000, () => socket.destroy(new Error(`no complete TCP reply within 2 s`)));
  let pending = Buffer.alloc(0);
  const messages: Decoded[] = [];
  for await (const chunk of socket) {
    pending = Buffer.concat([pending, chunk as Buffer]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      messages.push(packet.streamDecode(pending) as Decoded);
      pending = pending.subarray(2 + pending.readUInt16BE(0));
    }
    if (messages.length >= count) break;
  }
  return messages;
}

async function tcp(...queries: Packet[]): Promise<Decoded[]> {
  const socket = connect(dns.port, dns.host);
  await once(socket, 'connect');
  try {
    socket.write(Buffer.concat(queries.map((q) => packet.streamEncode(q))));
    return await readTcp(socket, queries.length);
  } finally {
    socket.destroy();
  }
}

/** The answer records a test server can produce, each with its string data. */
function records(reply: Decoded): StringAnswer[] {
  return (reply.answers ?? []).filter((a): a is StringAnswer => a.type === 'A' || a.type === 'AAAA' || a.type === 'CNAME');
}

const addresses = (reply: Decoded, type: 'A' | 'AAAA') => records(reply).filter((a) => a.type === type).map((a) => a.data);

test('address is host:port on loopback', () => {
  assert.is(dns.address, `127.0.0.1:${dns.port}`);
});

test('a known name is answered authoritatively, echoing id and question', async () => {
  dns.set('Web.Example.TEST.', { A: ['192.0.2.1', '192.0.2.2'], ttl: 120 });
  const q = query('web.example.test', 'A');
  const reply = await udp(q);
  assert.is(reply.id, q.id);
  assert.is(reply.rcode, 'NOERROR');
  assert.ok(reply.flag_aa);
  assert.ok(reply.flag_rd);
  assert.equal(reply.questions, [{ name: 'web.example.test', type: 'A', class: 'IN' }]);
  assert.equal(addresses(reply, 'A'), ['192.0.2.1', '192.0.2.2']);
  assert.ok(reply.answers?.every((a) => 'ttl' in a && a.ttl === 120));
});

test('an unknown name gets NXDOMAIN with the AA flag', async () => {
  const reply = await udp(query('nobody.example.test', 'A'));
  assert.is(reply.rcode, 'NXDOMAIN');
  assert.ok(reply.flag_aa);
  assert.equal(reply.answers, []);
});

test('a known name without the asked type gets NOERROR and no answers', async () => {
  dns.set('v4.example.test', { A: ['192.0.2.3'] });
  const reply = await udp(query('v4.example.test', 'AAAA'));
  assert.is(reply.rcode, 'NOERROR');
  assert.equal(reply.answers, []);
});

test('a removed name gets NXDOMAIN', async () => {
  dns.set('gone.example.test', { A: ['192.0.2.4'] });
  dns.remove('GONE.example.test.');
  assert.is((await udp(query('gone.example.test', 'A'))).rcode, 'NXDOMAIN');
});

test('a CNAME chain is followed within the server', async () => {
  dns.set('end.example.test', { AAAA: ['2001:db8::1'] });
  dns.set('middle.example.test', { CNAME: 'end.example.test' });
  dns.set('start.example.test', { CNAME: 'middle.example.test', ttl: 5 });
  const reply = await udp(query('start.example.test', 'AAAA'));
  assert.is(reply.rcode, 'NOERROR');
  assert.equal(
    records(reply).map((a) => [a.name, a.type, a.data]),
    [
      ['start.example.test', 'CNAME', 'middle.example.test'],
      ['middle.example.test', 'CNAME', 'end.example.test'],
      ['end.example.test', 'AAAA', '2001:db8::1'],
    ],
  );
});

test('a CNAME to a name the server does not know is answered with the CNAME alone', async () => {
  dns.set('outside.example.test', { CNAME: 'lb.elsewhere.test' });
  const reply = await udp(query('outside.example.test', 'A'));
  assert.is(reply.rcode, 'NOERROR');
  assert.equal(reply.answers?.map((a) => a.type), ['CNAME']);
});

test('a CNAME query returns the CNAME without following it', async () => {
  dns.set('alias.example.test', { CNAME: 'web.example.test' });
  dns.set('web.example.test', { A: ['192.0.2.1'] });
  const reply = await udp(query('alias.example.test', 'CNAME'));
  assert.equal(records(reply).map((a) => [a.type, a.data]), [['CNAME', 'web.example.test']]);
});

test('a CNAME loop gets SERVFAIL', async () => {
  dns.set('loop-a.example.test', { CNAME: 'loop-b.example.test' });
  dns.set('loop-b.example.test', { CNAME: 'loop-a.example.test' });
  assert.is((await udp(query('loop-a.example.test', 'A'))).rcode, 'SERVFAIL');
});

test('a name cannot have both a CNAME and addresses', () => {
  assert.throws(() => dns.set('both.example.test', { CNAME: 'web.example.test', A: ['192.0.2.9'] }), /CNAME and addresses/);
});

test('injected failures answer SERVFAIL or REFUSED, or not at all, until cleared', async () => {
  dns.set('sick.example.test', { A: ['192.0.2.5'] });
  dns.fail('sick.example.test', 'servfail');
  assert.is((await udp(query('sick.example.test', 'A'))).rcode, 'SERVFAIL');
  dns.fail('sick.example.test', 'refused');
  assert.is((await udp(query('sick.example.test', 'A'))).rcode, 'REFUSED');
  dns.fail('sick.example.test', 'timeout');
  assert.is(await udpRaw(packet.encode(query('sick.example.test', 'A')), 200), null);
  dns.fail('sick.example.test', null);
  assert.equal(addresses(await udp(query('sick.example.test', 'A')), 'A'), ['192.0.2.5']);
});

test('a failure can target one record type of a name', async () => {
  dns.set('split.example.test', { A: ['192.0.2.6'], AAAA: ['2001:db8::6'] });
  dns.fail('split.example.test', 'servfail', 'AAAA');
  assert.is((await udp(query('split.example.test', 'AAAA'))).rcode, 'SERVFAIL');
  assert.is((await udp(query('split.example.test', 'A'))).rcode, 'NOERROR');
  dns.fail('split.example.test', null);
  assert.is((await udp(query('split.example.test', 'AAAA'))).rcode, 'NOERROR');
});

test('failAll fails every name, and a per-name mode wins over it', async () => {
  dns.set('any.example.test', { A: ['192.0.2.7'] });
  dns.fail('special.example.test', 'refused');
  dns.failAll('servfail');
  try {
    assert.is((await udp(query('any.example.test', 'A'))).rcode, 'SERVFAIL');
    assert.is((await udp(query('special.example.test', 'A'))).rcode, 'REFUSED');
  } finally {
    dns.failAll(null);
    dns.fail('special.example.test', null);
  }
  assert.is((await udp(query('any.example.test', 'A'))).rcode, 'NOERROR');
});

test('queries are counted per name and type, including unanswered ones', async () => {
  dns.resetCounts();
  dns.set('count.example.test', { A: ['192.0.2.8'] });
  await udp(query('count.example.test', 'A'));
  await udp(query('COUNT.example.test.', 'AAAA'));
  await tcp(query('count.example.test', 'A'));
  dns.fail('count.example.test', 'timeout');
  await udpRaw(packet.encode(query('count.example.test', 'A')), 100);
  dns.fail('count.example.test', null);
  assert.is(dns.queries('count.example.test', 'A'), 3);
  assert.is(dns.queries('count.example.test', 'AAAA'), 1);
  assert.is(dns.queries('count.example.test'), 4);
  assert.is(dns.queries(), 4);
  dns.resetCounts();
  assert.is(dns.queries(), 0);
});

test('queries over TCP are answered on the same port', async () => {
  dns.set('tcp.example.test', { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] });
  const q = query('tcp.example.test', 'AAAA');
  const [reply] = await tcp(q);
  assert.is(reply?.id, q.id);
  assert.ok(reply?.flag_aa);
  assert.equal(reply && addresses(reply, 'AAAA'), ['2001:db8::10']);
});

test('several queries on one TCP connection are all answered in order', async () => {
  const first = query('tcp.example.test', 'A');
  const second = query('nobody.example.test', 'A');
  const replies = await tcp(first, second);
  assert.equal(
    replies.map((r) => [r.id, r.rcode]),
    [
      [first.id, 'NOERROR'],
      [second.id, 'NXDOMAIN'],
    ],
  );
});

test('a TCP query split across writes is answered once complete', async () => {
  const q = packet.streamEncode(query('tcp.example.test', 'A'));
  const socket = connect(dns.port, dns.host);
  await once(socket, 'connect');
  try {
    socket.write(q.subarray(0, 1));
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write(q.subarray(1, 9));
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.write(q.subarray(9));
    const [reply] = await readTcp(socket, 1);
    assert.equal(reply && addresses(reply, 'A'), ['192.0.2.10']);
  } finally {
    socket.destroy();
  }
});

test('an answer too large for UDP is truncated there and complete over TCP', async () => {
  const v6 = Array.from({ length: 60 }, (_, i) => `2001:db8::${(i + 1).toString(16)}`);
  dns.set('big.example.test', { AAAA: v6 });
  const overUdp = await udp(query('big.example.test', 'AAAA'));
  assert.ok(overUdp.flag_tc);
  assert.equal(overUdp.answers, []);
  const [overTcp] = await tcp(query('big.example.test', 'AAAA'));
  assert.not.ok(overTcp?.flag_tc);
  assert.is(overTcp && addresses(overTcp, 'AAAA').length, 60);
});

test('an EDNS query gets an EDNS reply and a larger UDP answer', async () => {
  // dns-packet does not compress names: 30 records make about 1 KB, above 512 and below 1232.
  const v4 = Array.from({ length: 30 }, (_, i) => `10.1.0.${i + 1}`);
  dns.set('edns.example.test', { A: v4 });
  const opt = { type: 'OPT' as const, name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] };
  const reply = await udp(query('edns.example.test', 'A', { additionals: [opt] }));
  assert.not.ok(reply.flag_tc);
  assert.is(addresses(reply, 'A').length, 30);
  assert.ok(reply.additionals?.some((rr) => rr.type === 'OPT'));
});

test('malformed packets do not stop the server', async () => {
  assert.is(await udpRaw(Buffer.from([1, 2, 3]), 100), null, 'shorter than a header: dropped');
  const garbage = Buffer.alloc(20, 0xff);
  garbage.writeUInt16BE(0x1234, 0);
  garbage.writeUInt16BE(0x0100, 2);
  const reply = await udpRaw(garbage);
  assert.is(reply?.id, 0x1234);
  assert.is(reply?.rcode, 'FORMERR');

  const socket = connect(dns.port, dns.host);
  await once(socket, 'connect');
  const framed = Buffer.alloc(2 + garbage.length);
  framed.writeUInt16BE(garbage.length, 0);
  garbage.copy(framed, 2);
  socket.write(framed);
  const [tcpReply] = await readTcp(socket, 1);
  socket.destroy();
  assert.is(tcpReply?.id, 0x1234);
  assert.is(tcpReply?.rcode, 'FORMERR');

  dns.set('still.example.test', { A: ['192.0.2.11'] });
  assert.equal(addresses(await udp(query('still.example.test', 'A')), 'A'), ['192.0.2.11']);
});

test('a TCP message shorter than a DNS header closes the connection', async () => {
  const socket = connect(dns.port, dns.host);
  await once(socket, 'connect');
  socket.write(Buffer.from([0, 4, 0xde, 0xad, 0xbe, 0xef]));
  const replies = await readTcp(socket, 1);
  socket.destroy();
  assert.equal(replies, []);
});

test('a query with several questions gets FORMERR', async () => {
  const q: Packet = { id: 77, type: 'query', questions: [{ name: 'a.example.test', type: 'A' }, { name: 'b.example.test', type: 'A' }] };
  const reply = await udp(q);
  assert.is(reply.rcode, 'FORMERR');
});

test('a response sent to the server is ignored', async () => {
  const stray = packet.encode({ id: 5, type: 'response', flags: packet.AUTHORITATIVE_ANSWER, questions: [{ name: 'x.example.test', type: 'A' }] });
  assert.is(await udpRaw(stray, 100), null);
});

test('close is idempotent and frees the port', async () => {
  const other = await startDnsServer();
  await other.close();
  await other.close();
  const socket = createSocket('udp4');
  socket.bind(other.port, other.host);
  await once(socket, 'listening');
  socket.close();
});

test.run();
