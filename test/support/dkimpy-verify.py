"""Verifies every DKIM signature of a message with dkimpy (Debian's python3-dkim), an implementation
independent of the service's signer: the message on stdin, the test DNS server as argv[1] (host:port).
Prints JSON: one entry per signature with its d=, its verdict and the header names of its h= tag."""
import json
import sys

import dkim
import dns.resolver

host, port = sys.argv[1].rsplit(':', 1)
resolver = dns.resolver.Resolver(configure=False)
resolver.nameservers = [host]
resolver.port = int(port)


def txt(name, timeout=5):
    name = name.decode() if isinstance(name, bytes) else name
    try:
        answer = resolver.resolve(name.rstrip('.'), 'TXT', lifetime=timeout)
    except Exception:
        return None
    return b''.join(b''.join(record.strings) for record in answer[:1])


message = sys.stdin.buffer.read()
checker = dkim.DKIM(message)
signatures = [value for name, value in checker.headers if name.lower() == b'dkim-signature']
results = []
for index, value in enumerate(signatures):
    tags = dkim.util.parse_tag_value(b''.join(value.split()))
    verified = dkim.DKIM(message).verify(idx=index, dnsfunc=txt)
    results.append({
        'domain': tags.get(b'd', b'').decode(),
        'verified': bool(verified),
        'h': [field.strip().decode().lower() for field in tags.get(b'h', b'').split(b':')],
    })
print(json.dumps(results))
