import { execFile, spawn } from 'node:child_process';
import { chown, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempFileName, writeFileAtomic } from '../lib/sinks/atomic-write.js';
import { WriteError } from '../lib/errors.js';

const run = promisify(execFile);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const isRoot = process.getuid?.() === 0;

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-atomic-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Everything in `dir` but the names the test put there itself: leftover temp files. */
async function leftovers(dir: string, ...expected: string[]): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !expected.includes(name));
}

/** Why mount cannot be used here, or undefined when it can. */
async function mountRefused(): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'lbdns-mount-probe-'));
  try {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir]);
    await run('umount', [dir]);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const refused = await mountRefused();
/** A test that needs mount (as root, with CAP_SYS_ADMIN, as on the project's machines) fails where it cannot run, never skips. */
const testWithMount = (name: string, body: () => Promise<void>) =>
  test(name, async () => {
    if (refused !== undefined) assert.unreachable(`this test needs mount(8) with tmpfs (root, CAP_SYS_ADMIN): ${refused}`);
    await body();
  });
const testAsRoot = (name: string, body: () => Promise<void>) =>
  test(name, async () => {
    if (!isRoot) assert.unreachable('this test needs root (to give a file to another owner)');
    await body();
  });

async function expectWriteError(promise: Promise<unknown>): Promise<WriteError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, WriteError);
    return err as WriteError;
  }
  assert.unreachable('the write should have failed');
  throw new Error('unreachable');
}

test('a new file is created with mode 0644 even under umask 077', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    const previous = process.umask(0o077);
    try {
      const result = await writeFileAtomic(path, '. { whoami }\n');
      assert.equal(result, { written: true, path });
    } finally {
      process.umask(previous);
    }
    assert.is((await stat(path)).mode & 0o777, 0o644);
    assert.is(await readFile(path, 'utf8'), '. { whoami }\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('the temp file is synced to disk before it is renamed over the target, and the directory after', async () => {
  await withDir(async (dir) => {
    const fsp = createRequire(import.meta.url)('node:fs/promises') as typeof import('node:fs/promises');
    const probe = await fsp.open(join(dir, 'probe'), 'w');
    const handles = Object.getPrototypeOf(probe) as { sync: () => Promise<void>; stat: () => Promise<import('node:fs').Stats> };
    await probe.close();
    const { sync } = handles;
    const { rename } = fsp;
    const events: string[] = [];
    handles.sync = async function (this: typeof handles) {
      events.push((await this.stat()).isDirectory() ? 'sync directory' : 'sync file');
      return sync.call(this);
    };
    fsp.rename = async (...args: Parameters<typeof rename>) => {
      events.push('rename');
      return rename(...args);
    };
    syncBuiltinESMExports();
    try {
      await writeFileAtomic(join(dir, 'Corefile'), 'new\n');
    } finally {
      handles.sync = sync;
      fsp.rename = rename;
      syncBuiltinESMExports();
    }
    assert.equal(events, ['sync file', 'rename', 'sync directory']);
  });
});

test('an unchanged file is not rewritten', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'same\n');
    const old = new Date('2020-01-01T00:00:00Z');
    await utimes(path, old, old);
    const before = await stat(path);
    const result = await writeFileAtomic(path, Buffer.from('same\n'));
    const after = await stat(path);
    assert.equal(result, { written: false, path });
    assert.is(after.ino, before.ino);
    assert.is(after.mtimeMs, old.getTime());
  });
});

test('changed content replaces the file with a new inode holding the full new content', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old content that is longer than the new one\n');
    const before = await stat(path);
    const result = await writeFileAtomic(path, 'new\n');
    assert.equal(result, { written: true, path });
    assert.is.not((await stat(path)).ino, before.ino);
    assert.is(await readFile(path, 'utf8'), 'new\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('an existing mode 0600 is kept', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n', { mode: 0o600 });
    await writeFileAtomic(path, 'new\n');
    assert.is((await stat(path)).mode & 0o777, 0o600);
  });
});

testAsRoot('an existing owner is kept when root rewrites the file', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n', { mode: 0o600 });
    await chown(path, 1234, 2345);
    await writeFileAtomic(path, 'new\n');
    const info = await stat(path);
    assert.equal([info.uid, info.gid], [1234, 2345]);
  });
});

testAsRoot('a writer that is not root replaces a file another user owns, taking it over: only root may give a file away', async () => {
  await withDir(async (dir) => {
    await chown(dir, 65534, 65534);
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n', { mode: 0o644 });
    const script = `
      import { writeFileAtomic } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'lib/sinks/atomic-write.ts')).href)};
      try {
        console.log(JSON.stringify(await writeFileAtomic(process.env.TARGET, 'new\\n')));
      } catch (err) {
        console.log(JSON.stringify({ name: err.name, message: err.message }));
      }`;
    const outcome = await new Promise<{ written?: boolean; message?: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, uid: 65534, gid: 65534, env: { ...process.env, TARGET: path, HOME: dir }, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}')));
    });
    assert.equal(outcome, { written: true, path }, outcome.message);
    assert.is(await readFile(path, 'utf8'), 'new\n');
    const info = await stat(path);
    assert.equal([info.uid, info.mode & 0o777], [65534, 0o644]);
  });
});

testAsRoot("a writer that is not root keeps the file's group when it is a member of it: CoreDNS may read the file by group", async () => {
  await withDir(async (dir) => {
    await chown(dir, 65534, 65534);
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n', { mode: 0o640 });
    await chown(path, 65534, 4242);
    // Root drops to uid 65534 with 4242 as a supplementary group only, as a pod's fsGroup would give.
    const script = `
      process.setgroups([4242]); process.setgid(65534); process.setuid(65534);
      const { writeFileAtomic } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'lib/sinks/atomic-write.ts')).href)});
      console.log(JSON.stringify(await writeFileAtomic(process.env.TARGET, 'new\\n')));`;
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, env: { ...process.env, TARGET: path }, stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve(text));
    });
    assert.equal(JSON.parse(out.trim().split('\n').at(-1) ?? '{}'), { written: true, path });
    const info = await stat(path);
    assert.equal([info.uid, info.gid, info.mode & 0o777], [65534, 4242, 0o640]);
  });
});

test('a write cut short by the file size limit leaves the old file intact and no temp file', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n');
    // Node ignores SIGXFSZ, so past RLIMIT_FSIZE write() first comes back short and then fails with EFBIG.
    const script = `
      import { writeFileAtomic } from ${JSON.stringify(pathToFileURL(join(repoRoot, 'lib/sinks/atomic-write.ts')).href)};
      try {
        await writeFileAtomic(process.env.TARGET, 'x'.repeat(1 << 20));
        console.log(JSON.stringify({ ok: true }));
      } catch (err) {
        console.log(JSON.stringify({ name: err.name, message: err.message }));
      }`;
    const outcome = await new Promise<{ ok?: true; name?: string; message?: string }>((resolve, reject) => {
      const child = spawn(
        'bash',
        ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: repoRoot, env: { ...process.env, TARGET: path }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('error', reject);
      child.on('exit', () => resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '{}')));
    });
    assert.is(outcome.name, 'WriteError');
    assert.match(outcome.message ?? '', path);
    assert.match(outcome.message ?? '', 'writing the temporary file failed');
    assert.match(outcome.message ?? '', 'EFBIG');
    assert.match(outcome.message ?? '', 'disk space');
    assert.is(await readFile(path, 'utf8'), 'old\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

testWithMount('a full file system leaves the old file intact and no temp file', async () => {
  await withDir(async (dir) => {
    await run('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir]);
    try {
      const path = join(dir, 'Corefile');
      await writeFile(path, 'old\n');
      const err = await expectWriteError(writeFileAtomic(path, 'x'.repeat(64 * 1024)));
      assert.match(err.message, path);
      assert.match(err.message, 'writing the temporary file failed');
      assert.match(err.message, 'ENOSPC');
      assert.match(err.message, 'read-only');
      assert.is(await readFile(path, 'utf8'), 'old\n');
      assert.equal(await leftovers(dir, 'Corefile'), []);
    } finally {
      await run('umount', [dir]);
    }
  });
});

testWithMount('a target that cannot be renamed over (a bind mount) stays intact and no temp file is left', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    const source = join(dir, 'source');
    await writeFile(source, 'old\n');
    await writeFile(path, '');
    // Kubernetes mounts a ConfigMap key with subPath exactly like this; rename(2) onto a mount point is EBUSY.
    await run('mount', ['--bind', source, path]);
    try {
      const err = await expectWriteError(writeFileAtomic(path, 'new\n'));
      assert.match(err.message, path);
      assert.match(err.message, 'renaming it over the target failed');
      assert.match(err.message, 'EBUSY');
      assert.match(err.message, 'mount its directory instead');
      assert.is(await readFile(path, 'utf8'), 'old\n');
      assert.equal(await leftovers(dir, 'Corefile', 'source'), []);
    } finally {
      await run('umount', [path]);
    }
  });
});

test('a directory at the target path is refused and left as it is', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await mkdir(path);
    await writeFile(join(path, 'inside'), 'keep\n');
    const err = await expectWriteError(writeFileAtomic(path, 'new\n'));
    assert.match(err.message, path);
    assert.match(err.message, 'not a regular file');
    assert.is(await readFile(join(path, 'inside'), 'utf8'), 'keep\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('a stale temp file from a killed writer, named as the writer names them, is removed by the next write', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n');
    const stale = join(dir, tempFileName('Corefile', 4242));
    await writeFile(stale, 'half a Corefi');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(stale, twoMinutesAgo, twoMinutesAgo);
    await writeFileAtomic(path, 'new\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('a stale temp file is removed even when the Corefile is unchanged', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'same\n');
    const stale = join(dir, tempFileName('Corefile', 4242));
    await writeFile(stale, 'half a Corefi');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(stale, twoMinutesAgo, twoMinutesAgo);
    const result = await writeFileAtomic(path, 'same\n');
    assert.is(result.written, false);
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('a temp file left by a writer killed between create and rename is removed once stale', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n');
    // A real process, SIGKILLed while it holds its temp file open: what it leaves is what a crash leaves.
    const script = `import { open } from 'node:fs/promises'; const h = await open(${JSON.stringify(join(dir, 'NAME'))}, 'wx', 0o600); await h.write('half'); process.stdout.write('ready'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script.replace('NAME', tempFileName('Corefile', 4243))], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before it held its temp file`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const [left] = await leftovers(dir, 'Corefile');
    assert.ok(left !== undefined, 'the killed writer left its temp file');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(join(dir, left), twoMinutesAgo, twoMinutesAgo);
    await writeFileAtomic(path, 'new\n');
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('a recent temp file, possibly another live writer\'s, is left alone', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n');
    const live = tempFileName('Corefile', 4242);
    await writeFile(join(dir, live), 'being written');
    await writeFileAtomic(path, 'new\n');
    assert.equal(await leftovers(dir, 'Corefile'), [live]);
  });
});

test('an old temp file for another base name is left alone', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    const other = tempFileName('hosts', 4242);
    await writeFile(join(dir, other), 'not ours to judge');
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    await utimes(join(dir, other), twoMinutesAgo, twoMinutesAgo);
    await writeFileAtomic(path, 'new\n');
    assert.equal(await leftovers(dir, 'Corefile'), [other]);
  });
});

test('a symlink is kept and the file it points to is replaced next to itself', async () => {
  await withDir(async (dir) => {
    await mkdir(join(dir, 'real'));
    const real = join(dir, 'real', 'Corefile');
    const link = join(dir, 'Corefile');
    await writeFile(real, 'old\n');
    await symlink(join('real', 'Corefile'), link);
    const result = await writeFileAtomic(link, 'new\n');
    assert.equal(result, { written: true, path: await realpath(real) });
    assert.ok((await lstat(link)).isSymbolicLink());
    assert.is(await readFile(real, 'utf8'), 'new\n');
    assert.equal(await leftovers(join(dir, 'real'), 'Corefile'), []);
  });
});

test('a dangling symlink is refused rather than replaced by a regular file', async () => {
  await withDir(async (dir) => {
    const link = join(dir, 'Corefile');
    await symlink(join(dir, 'missing', 'Corefile'), link);
    const err = await expectWriteError(writeFileAtomic(link, 'new\n'));
    assert.match(err.message, link);
    assert.match(err.message, 'does not exist');
    assert.ok((await lstat(link)).isSymbolicLink());
  });
});

test('20 concurrent writes leave one complete content and no temp file', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    await writeFile(path, 'old\n');
    const contents = Array.from({ length: 20 }, (_, i) => `# writer ${i}\n${String(i).repeat(8192)}\n`);
    await Promise.all(contents.map((content) => writeFileAtomic(path, content)));
    assert.ok(contents.includes(await readFile(path, 'utf8')));
    assert.equal(await leftovers(dir, 'Corefile'), []);
  });
});

test('a reader polling during 200 rewrites only ever sees a complete old or new content', async () => {
  await withDir(async (dir) => {
    const path = join(dir, 'Corefile');
    const versions = Array.from({ length: 201 }, (_, i) => `# version ${i}\n${`${i};`.repeat(16384)}\n# end ${i}\n`);
    const complete = new Set(versions);
    await writeFile(path, versions[0] ?? '');
    let writing = true;
    let reads = 0;
    const torn: string[] = [];
    const reader = (async () => {
      while (writing) {
        const seen = await readFile(path, 'utf8');
        reads++;
        if (!complete.has(seen)) torn.push(seen.slice(0, 40));
      }
    })();
    try {
      for (const version of versions.slice(1)) await writeFileAtomic(path, version);
    } finally {
      writing = false;
      await reader;
    }
    assert.equal(torn, []);
    assert.ok(reads > 1, `the reader ran ${reads} times`);
    assert.is(await readFile(path, 'utf8'), versions[200]);
  });
});

test.run();
