import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { isValidDomainName, parseSeedDomains } from '../../shared/domains/registry.ts';
import { scopesOf } from '../../shared/platform/auth/token-verifier.ts';
import { envList, envNumber, envString } from '../../shared/platform/config/env.ts';

function withEnv(values: Record<string, string>, run: () => void): void {
  const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  Object.assign(process.env, values);
  try {
    run();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('environment readers', () => {
  it('treats blank as unset and trims lists', () => {
    withEnv({ T_STRING: '  ', T_LIST: ' a, b ,,c ', T_NUMBER: '7' }, () => {
      assert.equal(envString('T_STRING', 'fallback'), 'fallback');
      assert.deepEqual(envList('T_LIST'), ['a', 'b', 'c']);
      assert.equal(envNumber('T_NUMBER', 1), 7);
      assert.equal(envNumber('T_UNSET_NUMBER', 1), 1);
    });
  });

  it('fails loudly on a bad number', () => {
    withEnv({ T_NUMBER: 'fifty' }, () =>
      assert.throws(() => envNumber('T_NUMBER', 1), /T_NUMBER must be a number/),
    );
    withEnv({ T_NUMBER: '-1' }, () => assert.throws(() => envNumber('T_NUMBER', 1), />= 0/));
  });
});

describe('seed domains and domain names', () => {
  it('parses domain=account pairs', () => {
    assert.deepEqual(parseSeedDomains(' example.test=dev-account , b.example=acct-2 ,'), [
      { domain: 'example.test', account: 'dev-account' },
      { domain: 'b.example', account: 'acct-2' },
    ]);
    assert.deepEqual(parseSeedDomains(''), []);
    assert.throws(() => parseSeedDomains('example.test'), /not domain=account/);
  });

  it('accepts host names and refuses the rest', () => {
    for (const name of ['example.test', 'Mail.Example.COM.', 'a-b.c-d.example', 'xn--bcher-kva.example']) {
      assert.equal(isValidDomainName(name), true, name);
    }
    for (const name of [
      'localhost',
      'not a domain',
      '-bad.example',
      'bad-.example',
      'a..b',
      'user@example.test',
      '',
    ]) {
      assert.equal(isValidDomainName(name), false, name);
    }
  });
});

describe('token scopes', () => {
  it('reads the scope string and the scp array', () => {
    assert.deepEqual([...scopesOf({ scope: 'a  b' })], ['a', 'b']);
    assert.deepEqual([...scopesOf({ scp: ['c', 7, 'd'] })].sort(), ['c', 'd']);
    assert.deepEqual([...scopesOf({})], []);
  });
});
