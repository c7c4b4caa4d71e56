import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';
import packet from 'dns-packet';

export interface DnsServer {
  /** host:port, for WEBHOOK_DNS_SERVERS. */
  address: string;
  /** What each name resolves to now; change it to change the answers. Unknown names: NXDOMAIN. */
  records: Map<string, string[]>;
  queries: string[];
  close(): Promise<void>;
}

/** A real DNS server on loopback UDP answering A and AAAA from `records`, with TTL 0. */
export async function startDnsServer(): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const records = new Map<string, string[]>();
  const queries: string[] = [];
  socket.on('message', (message, rinfo) => {
    let query: packet.Packet;
    try {
      query = packet.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries.push(`${question.type} ${question.name}`);
    const addresses = records.get(question.name.toLowerCase());
    const wanted = (addresses ?? []).filter((a) => (question.type === 'AAAA' ? a.includes(':') : question.type === 'A' ? !a.includes(':') : false));
    const reply = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (addresses ? 0 : 3),
      questions: [question],
      answers: wanted.map((data) => ({ type: question.type as 'A' | 'AAAA', name: question.name, ttl: 0, class: 'IN', data })),
    });
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    records,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
