import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'vitest';
import { selfSignedCertificate } from '../../submission/certificate.ts';

describe('the submission server’s self-signed certificate', () => {
  // A random serial starts with a zero byte once in 128 starts: written as it came, it was not DER's
  // minimal INTEGER, and OpenSSL refused the certificate ("illegal padding"), failing `npm start`.
  it('encodes every serial in DER’s minimal form, whatever its first bytes', () => {
    const serials = [
      Buffer.from('0001020304050607', 'hex'),
      Buffer.from('007f000000000000', 'hex'),
      Buffer.from('0080000000000000', 'hex'),
      Buffer.from('ff00000000000000', 'hex'),
      Buffer.from('0000000000000000', 'hex'),
    ];
    for (const serial of serials) {
      const certificate = new X509Certificate(selfSignedCertificate('localhost', new Date(), serial).cert);
      assert.equal(BigInt(`0x${certificate.serialNumber}`), BigInt(`0x${serial.toString('hex')}`));
      assert.ok(certificate.checkHost('localhost'));
    }
  });
});
