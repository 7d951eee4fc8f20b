import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dnsServerAddress, joinHostPort, parseHostPort } from '../lib/grammar/host-port.js';

test('an IP with or without a port, IPv6 in brackets when a port follows', () => {
  assert.equal(parseHostPort('192.0.2.53'), { host: '192.0.2.53', isIp: true, port: undefined });
  assert.equal(parseHostPort('192.0.2.53:5353'), { host: '192.0.2.53', isIp: true, port: 5353 });
  assert.equal(parseHostPort('FD00::53'), { host: 'fd00::53', isIp: true, port: undefined });
  assert.equal(parseHostPort('[fd00::53]:53'), { host: 'fd00::53', isIp: true, port: 53 });
});

test('a host name only where the rules allow one, lower-cased', () => {
  assert.is(parseHostPort('dns1.example.com:53'), null);
  assert.equal(parseHostPort('DNS1.example.com:53', { names: true }), { host: 'dns1.example.com', isIp: false, port: 53 });
  assert.equal(parseHostPort('localhost', { names: true }), { host: 'localhost', isIp: false, port: undefined });
});

test('a port outside 1-65535, or 0 where a listener may not take any free port, is refused', () => {
  for (const bad of ['10.0.0.1:0', '10.0.0.1:65536', '10.0.0.1:99999', '10.0.0.1:', '10.0.0.1:x', '[fd00::1]:123456']) assert.is(parseHostPort(bad), null, bad);
  assert.equal(parseHostPort('127.0.0.1:0', { minPort: 0 }), { host: '127.0.0.1', isIp: true, port: 0 });
});

test('":PORT" only for a listener, and a required port must be there', () => {
  assert.is(parseHostPort(':9191'), null);
  assert.equal(parseHostPort(':9191', { emptyHost: true }), { host: '', isIp: false, port: 9191 });
  assert.is(parseHostPort('127.0.0.1', { portRequired: true }), null);
});

test('what is no address is refused: brackets around a name, a bare IPv6 with a port, stray colons', () => {
  for (const bad of ['[dns1.example.com]:53', 'fd00::53:53:x', '10.0.0.1:53:53', '', '10.0.0.05', 'a b:53']) assert.is(parseHostPort(bad, { names: true }), null, bad);
});

test('a DNS server address gets port 53 when it has none, in the form Resolver.setServers takes', () => {
  assert.is(dnsServerAddress('10.0.0.10'), '10.0.0.10:53');
  assert.is(dnsServerAddress('[fd00::10]:5353'), '[fd00::10]:5353');
  assert.is(dnsServerAddress('fd00::10'), '[fd00::10]:53');
  assert.is(dnsServerAddress('dns1.example.com'), null);
  assert.is(joinHostPort('fd00::1', 53), '[fd00::1]:53');
});

test.run();
