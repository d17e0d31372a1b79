// A small long-lived process that starts the driver's tools for it, so no tool costs a fork of the whole Node.js process, and makes the few system calls Node.js has no binding for.
import { spawn, type ChildProcess } from 'node:child_process';
import { Socket } from 'node:net';
import { constants } from 'node:os';
import { log } from '../util/log.js';

/**
 * Why it exists: Node.js starts a child by forking itself, and a fork copies the page tables of
 * the whole driver, on the event loop's thread. On the 2-core development machine that cost about
 * 5 ms of the driver's CPU per tool, and with setpriv's own start 12-14 ms of CPU in all;
 * through this helper the driver's share is about 0.5 ms and the total 8-10 ms
 * (`node dist/benchmarks/driver-bench.js --tools-only`). A pod's volume ran about eight tools
 * over its life; with the system calls below, a loop volume's runs one (mkfs).
 *
 * The helper is Perl because perl-base is part of every Debian system (it is "Essential"), the
 * image included, and it can do what a shell cannot for each tool: a session of its own (so a
 * timeout kills the tool's whole group, as before), the parent-death signal (so the tool dies with
 * the helper, which dies with the driver), and the exit status beside separate stdout and stderr.
 * It reads length-prefixed frames, so no argument is ever parsed by a shell.
 *
 * It also preallocates files itself, with fallocate(2) through Perl's syscall: reserving a loop
 * image's blocks is one short system call, which as fallocate(1) cost a process start of several
 * milliseconds (part (g) of the driver benchmark). The call runs on the helper's own loop, so
 * tools wait behind it: on the local filesystems pools live on, ext4, XFS and btrfs reserve
 * blocks as extents without writing them (the debug log times each call). It opens the file
 * without creating it and without following a final symbolic link, and refuses anything but a
 * regular file.
 *
 * Mounts and unmounts are the same: mount(2), mount_setattr(2) and umount2(2) where mount(8)
 * and umount(8) each cost a process start (sys/mounts.ts says which mounts, and exec.ts's
 * callUnlessRefused what happens when the kernel refuses one). They too run on the helper's
 * loop: a mount is short on the filesystems Lode makes, unless a journal has to be replayed.
 * Loop devices too: attached and detached by their ioctls where losetup cost a process each.
 *
 * Frames, each a 32-bit big-endian length and then: a type byte, a 32-bit job id, and the rest.
 *   to the helper:   R id (len file)(len argv0)(len arg)...  start a tool
 *                    K id                                      SIGKILL the tool's process group
 *                    A id (len file)(len bytes)                fallocate(2) the file's first bytes (decimal)
 *                    M id (len source)(len target)(len type)(len flags)(len data)   mount(2)
 *                    U id (len target)(len flags)              umount2(2)
 *                    S id (len target)(len set)(len clear)     mount_setattr(2) of the mount at the target
 *                    L id (len image)(len ro)(len dio)         attach a loop device (answers /dev/loopN)
 *                    C id (len device)                         detach a loop device
 *   from the helper: H 0                                       it runs, with its parent-death signal set
 *                    O id bytes | E id bytes                   the tool's stdout or stderr
 *                    X id status                               it ended (a raw wait status)
 *                    F id errno                                it could not be started
 *                    D id errno text                           a system call ended: errno 0 and its answer, or the errno's message
 */
const PROGRAM = String.raw`
use strict; use warnings; no warnings qw(exec); use POSIX (); use Fcntl qw(O_RDONLY O_RDWR O_WRONLY O_NOFOLLOW O_NONBLOCK O_NOCTTY O_DIRECT F_GETFL F_SETFL);
my ($prctl, $parent, $fallocate, $mount, $umount2, $setattr) = @ARGV;
my $self = $$;
# The parent-death signal, then a check that the driver did not die before it was set.
syscall($prctl, 1, 9) == 0 or exit 70;
exit 0 if getppid() != $parent;
binmode STDIN; binmode STDOUT;
my (%job, %pipe, %bypid);
my $in = '';
sub put {
  my $f = pack('a1 N', $_[0], $_[1]) . $_[2];
  $f = pack('N', length $f) . $f;
  while (length $f) {
    my $n = syswrite(STDOUT, $f);
    if (!defined $n) { next if $!{EINTR}; exit 0; }
    substr($f, 0, $n) = '';
  }
}
put('H', 0, '');
sub start {
  my ($id, $file, @argv) = @_;
  my ($or, $ow, $er, $ew, $xr, $xw);
  unless (pipe($or, $ow) && pipe($er, $ew) && pipe($xr, $xw)) { put('F', $id, pack('N', $! + 0)); return; }
  my $pid = fork();
  if (!defined $pid) { my $e = $! + 0; close $_ for grep { defined } ($or, $ow, $er, $ew, $xr, $xw); put('F', $id, pack('N', $e)); return; }
  if ($pid == 0) {
    POSIX::setsid();
    syscall($prctl, 1, 9);
    POSIX::_exit(127) if getppid() != $self;
    open(STDIN, '<', '/dev/null'); open(STDOUT, '>&', $ow); open(STDERR, '>&', $ew);
    exec { $file } @argv;
    syswrite($xw, pack('N', $! + 0));
    POSIX::_exit(127);
  }
  close $ow; close $ew; close $xw;
  # End of file at the exec (the write end is closed on exec), an errno if the exec failed.
  my $e = '';
  while (1) { my $n = sysread($xr, $e, 4 - length $e, length $e); last if defined $n && ($n == 0 || length $e == 4); last unless defined $n || $!{EINTR}; }
  close $xr;
  if (length $e == 4) { waitpid($pid, 0); close $or; close $er; put('F', $id, $e); return; }
  $job{$id} = { pid => $pid, open => 2 };
  $bypid{$pid} = $id;
  $pipe{fileno $or} = [$id, 'O', $or];
  $pipe{fileno $er} = [$id, 'E', $er];
}
sub done {
  my ($id, $e) = @_;
  put('D', $id, pack('N', $e) . ($e ? do { local $! = $e; "$!" } : ''));
}
sub allocate {
  my ($id, $file, $bytes) = @_;
  my $fh;
  # EINVAL (22) for a size that is not a number, or a file that is not a regular one (a device, a pipe).
  my $e = (defined $file && defined $bytes && $bytes =~ /^[0-9]{1,18}$/) ? 0 : 22;
  if ($e == 0 && !sysopen($fh, $file, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)) { $e = $! + 0; }
  elsif ($e == 0 && !-f $fh) { $e = 22; }
  elsif ($e == 0 && syscall($fallocate, fileno($fh), 0, 0, 0 + $bytes) != 0) { $e = $! + 0; }
  close $fh if defined $fh;
  done($id, $e);
}
# A string argument must hold no NUL (the kernel would read it cut short); each is passed as a
# fresh string, which Perl's syscall hands over as a pointer, and an empty one as NULL.
sub cstr { return !defined $_[0] || index($_[0], "\0") >= 0 ? undef : length $_[0] ? "$_[0]" : 0; }
sub flags { return defined $_[0] && $_[0] =~ /^[0-9]{1,10}$/ ? 0 + $_[0] : undef; }
sub mnt {
  my ($id, @a) = @_;
  my ($source, $target, $type, $data, $flags) = (cstr($a[0]), cstr($a[1]), cstr($a[2]), cstr($a[4]), flags($a[3]));
  my $e = (grep { !defined } $source, $target, $type, $data, $flags) || !length $a[1] ? 22 : 0;
  $e = $! + 0 if $e == 0 && syscall($mount, $source, $target, $type, $flags, $data) != 0;
  done($id, $e);
}
sub umnt {
  my ($id, @a) = @_;
  my ($target, $flags) = (cstr($a[0]), flags($a[1]));
  my $e = !defined $target || !defined $flags || !length $a[0] ? 22 : 0;
  $e = $! + 0 if $e == 0 && syscall($umount2, $target, $flags) != 0;
  done($id, $e);
}
# mount_setattr(2) of the mount at the target (a mount's root): struct mount_attr's version 0,
# the attributes to set and to clear, no propagation change, no user namespace.
sub setattr {
  my ($id, @a) = @_;
  my ($target, $set, $clear) = (cstr($a[0]), flags($a[1]), flags($a[2]));
  my $e = !defined $target || !defined $set || !defined $clear || !length $a[0] ? 22 : 0;
  $e = $! + 0 if $e == 0 && syscall($setattr, -100, $target, 0, pack('Q4', $set, $clear, 0, 0), 32) != 0;
  done($id, $e);
}
# A loop device for the image, as losetup --find --show does: a free device from loop-control,
# then LOOP_CONFIGURE (Linux 5.8) with the image open (O_DIRECT for direct I/O, as losetup opens
# it), again while another process takes the free device first (EBUSY). Answers /dev/loopN.
# Perl opens every file here close-on-exec, so no tool started later inherits one.
sub loop_attach {
  my ($id, @a) = @_;
  my ($file, $ro, $dio) = (cstr($a[0]), flags($a[1]), flags($a[2]));
  return done($id, 22) if !defined $file || !defined $ro || !defined $dio || !length $a[0];
  my ($img, $ctl, $e, $device);
  my $mode = $ro ? O_RDONLY : O_RDWR;
  # Not blocking in the open (a FIFO put in the image's place would), then as losetup has it.
  return done($id, $! + 0) unless sysopen($img, $file, $mode | O_NOFOLLOW | O_NONBLOCK | ($dio ? O_DIRECT : 0));
  return done($id, 22) unless -f $img;
  my $fl = fcntl($img, F_GETFL, 0);
  return done($id, $! + 0) unless defined $fl && fcntl($img, F_SETFL, $fl & ~O_NONBLOCK);
  return done($id, $! + 0) unless sysopen($ctl, '/dev/loop-control', O_RDWR);
  my $config = pack('L L Q5 L4 a64 a64 a32 Q2 Q8', fileno($img), 0, (0) x 5, 0, 0, 0, ($ro ? 1 : 0) | ($dio ? 16 : 0),
    substr($file, 0, 63), '', '', (0) x 10);
  for (1 .. 64) {
    my $n = ioctl($ctl, 0x4C82, 0);
    if (!defined $n) { $e = $! + 0; last; }
    $device = '/dev/loop' . (0 + $n);
    my $lo;
    if (!sysopen($lo, $device, $mode)) { $e = $! + 0; last; }
    my $ok = ioctl($lo, 0x4C0A, $config);
    $e = $ok ? 0 : $! + 0;
    close $lo;
    last unless $e == 16;
  }
  close $ctl; close $img;
  $e ? done($id, $e) : put('D', $id, pack('N', 0) . $device);
}
# LOOP_CLR_FD on a loop device, as losetup --detach does.
sub loop_detach {
  my ($id, $device) = @_;
  return done($id, 22) unless defined $device && $device =~ m{^/dev/loop[0-9]{1,9}$};
  my $lo;
  return done($id, $! + 0) unless sysopen($lo, $device, O_RDONLY);
  my $ok = ioctl($lo, 0x4C01, 0);
  my $e = $ok ? 0 : $! + 0;
  close $lo;
  done($id, $e);
}
sub stop {
  my $j = $job{$_[0]} or return;
  kill('KILL', -$j->{pid}) or defined $j->{status} or kill('KILL', $j->{pid});
}
while (1) {
  my $rin = '';
  vec($rin, 0, 1) = 1;
  vec($rin, $_, 1) = 1 for keys %pipe;
  # The end of a tool's output wakes this loop, but the kernel closes a process's files a moment
  # before it can be reaped: a tool whose output has ended is polled for, briefly.
  my $polling = grep { $_->{open} == 0 } values %job;
  my $n = select(my $rout = $rin, undef, undef, $polling ? 0.001 : undef);
  if ($n > 0) {
    if (vec($rout, 0, 1)) {
      my $got = sysread(STDIN, $in, 65536, length $in);
      # The driver is gone: exit, and the tools die with this process (their parent-death signal).
      exit 0 if defined $got && $got == 0;
      exit 0 if !defined $got && !$!{EINTR} && !$!{EAGAIN};
      while (length($in) >= 4) {
        my $len = unpack('N', $in);
        last if length($in) < 4 + $len;
        my $frame = substr($in, 4, $len);
        substr($in, 0, 4 + $len) = '';
        my ($type, $id) = unpack('a1 N', $frame);
        if ($type eq 'R') { start($id, unpack('x5 (N/a*)*', $frame)) } elsif ($type eq 'K') { stop($id) }
        elsif ($type eq 'A') { allocate($id, unpack('x5 (N/a*)*', $frame)) }
        elsif ($type eq 'M') { mnt($id, unpack('x5 (N/a*)*', $frame)) } elsif ($type eq 'U') { umnt($id, unpack('x5 (N/a*)*', $frame)) }
        elsif ($type eq 'S') { setattr($id, unpack('x5 (N/a*)*', $frame)) }
        elsif ($type eq 'L') { loop_attach($id, unpack('x5 (N/a*)*', $frame)) } elsif ($type eq 'C') { loop_detach($id, unpack('x5 (N/a*)*', $frame)) }
      }
    }
    for my $fd (keys %pipe) {
      next unless vec($rout, $fd, 1);
      my ($id, $kind, $fh) = @{$pipe{$fd}};
      my $got = sysread($fh, my $buf, 65536);
      next if !defined $got && ($!{EINTR} || $!{EAGAIN});
      if ($got) { put($kind, $id, $buf); next; }
      close $fh; delete $pipe{$fd}; $job{$id}{open} -= 1;
    }
  }
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $id = delete $bypid{$pid};
    $job{$id}{status} = $? if defined $id;
  }
  for my $id (keys %job) {
    my $j = $job{$id};
    next unless $j->{open} == 0 && defined $j->{status};
    put('X', $id, pack('N', $j->{status}));
    delete $job{$id};
  }
}
`;

/** The system call numbers Perl's syscall needs, on the architectures the image is built for. */
interface SyscallNumbers {
  prctl: number;
  fallocate: number;
  mount: number;
  umount2: number;
  mountSetattr: number;
}
const SYSCALLS: Partial<Record<NodeJS.Architecture, SyscallNumbers>> = {
  x64: { prctl: 157, fallocate: 285, mount: 165, umount2: 166, mountSetattr: 442 },
  arm64: { prctl: 167, fallocate: 47, mount: 40, umount2: 39, mountSetattr: 442 },
};

/** How a tool started through the helper ended. */
export type ToolEnd =
  | { kind: 'exited'; code: number | null; signal: NodeJS.Signals | null }
  /** It never ran: errno's name (ENOENT, EACCES...). */
  | { kind: 'not-started'; code: string }
  /** The helper itself ended (killed from outside): the tool was killed with it. */
  | { kind: 'lost'; why: string }
  /**
   * The helper ended before it said it runs (perl broken, prctl refused): the tool was never
   * started, and no tool will be through a helper in this process.
   */
  | { kind: 'helper-unusable'; why: string };

/** A system call the helper makes itself (`call`), with its arguments; an empty string is passed as NULL. */
export type SystemCall =
  | { name: 'fallocate'; file: string; bytes: number }
  | { name: 'mount'; source: string; target: string; fsType: string; flags: number; data: string }
  | { name: 'umount2'; target: string; flags: number }
  /** Of the mount whose root `target` is: MOUNT_ATTR_* bits to set and to clear, the rest kept. */
  | { name: 'mount_setattr'; target: string; set: number; clear: number }
  /** A free loop device attached to `file` (its ioctls, LOOP_CONFIGURE); answers the device's path. */
  | { name: 'loop_attach'; file: string; readOnly: boolean; directIo: boolean }
  /** LOOP_CLR_FD on `device` (/dev/loopN). */
  | { name: 'loop_detach'; device: string };

/** How a system call the helper made ended. */
export type CallEnd =
  /** `answer`: what the call gives back, as text ('' for most). */
  | { kind: 'done'; answer: string }
  /** The system call (or opening the file) failed: errno's name and the system's message for it. */
  | { kind: 'failed'; code: string; message: string }
  | Extract<ToolEnd, { kind: 'lost' | 'helper-unusable' }>;

/** What the caller of `start` hears about its tool. */
export interface ToolSink {
  stdout(chunk: Buffer): void;
  stderr(chunk: Buffer): void;
  end(how: ToolEnd): void;
}

const errnoNames = new Map<number, string>(Object.entries(constants.errno).map(([name, n]) => [n, name]));
const signalNames = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/** A request in flight: a tool, or a system call. */
type Job = { tool: ToolSink } | { call: (how: CallEnd) => void };

/** Ends `job` because its helper ended. */
function endWithHelper(job: Job, how: Extract<ToolEnd, { kind: 'lost' | 'helper-unusable' }>): void {
  if ('tool' in job) job.tool.end(how);
  else job.call(how);
}

type FrameType = 'R' | 'K' | 'A' | 'M' | 'U' | 'S' | 'L' | 'C';

/** A system call's request frame: its type and its arguments, as strings. */
function callFrame(call: SystemCall): [FrameType, string[]] {
  switch (call.name) {
    case 'fallocate': return ['A', [call.file, String(call.bytes)]];
    case 'mount': return ['M', [call.source, call.target, call.fsType, String(call.flags), call.data]];
    case 'umount2': return ['U', [call.target, String(call.flags)]];
    case 'mount_setattr': return ['S', [call.target, String(call.set), String(call.clear)]];
    case 'loop_attach': return ['L', [call.file, call.readOnly ? '1' : '0', call.directIo ? '1' : '0']];
    case 'loop_detach': return ['C', [call.device]];
  }
}

function frame(type: FrameType, id: number, strings: readonly string[] = []): Buffer {
  const parts = strings.map((s) => Buffer.from(s, 'utf8'));
  const body = 5 + parts.reduce((n, p) => n + 4 + p.length, 0);
  const out = Buffer.alloc(4 + body);
  out.writeUInt32BE(body, 0);
  out.write(type, 4, 'latin1');
  out.writeUInt32BE(id, 5);
  let at = 9;
  for (const p of parts) {
    out.writeUInt32BE(p.length, at);
    p.copy(out, at + 4);
    at += 4 + p.length;
  }
  return out;
}

/** Keeps `stream` from holding the process open (false), or lets it (true): only while a tool runs. */
function hold(stream: unknown, on: boolean): void {
  if (stream instanceof Socket) {
    if (on) stream.ref();
    else stream.unref();
  }
}

/** One helper per process, started at the first tool and again after it ended. */
export class ToolHelper {
  private child: ChildProcess | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  private pending: Buffer = Buffer.alloc(0);
  /** Whether the current helper has said it runs: until then its end means helpers cannot run here. */
  private proven = false;

  /** A helper for this machine, or null where it cannot run (no perl, or an architecture without a prctl number here). */
  static forThisMachine(perl: string | undefined): ToolHelper | null {
    const numbers = SYSCALLS[process.arch];
    return perl === undefined || numbers === undefined ? null : new ToolHelper(perl, numbers);
  }

  private constructor(private readonly perl: string, private readonly syscalls: SyscallNumbers) {}

  /** Starts `file` (an absolute path) with `argv` (argv[0] first); returns the job id `stop` takes. */
  start(file: string, argv: readonly string[], sink: ToolSink): number {
    return this.send('R', { tool: sink }, [file, ...argv]);
  }

  /**
   * Makes `call` in the helper. It cannot be stopped once sent: each is short and ends on its own.
   * fallocate reserves the first `bytes` of `file` (which must exist: it is never created),
   * extending it to that size, as fallocate(1) does.
   */
  call(call: SystemCall, end: (how: CallEnd) => void): void {
    const [type, strings] = callFrame(call);
    this.send(type, { call: end }, strings);
  }

  private send(type: FrameType, job: Job, strings: readonly string[]): number {
    const child = this.child ?? this.launch();
    const id = this.nextId;
    this.nextId = this.nextId >= 0xffffffff ? 1 : this.nextId + 1;
    this.jobs.set(id, job);
    if (this.jobs.size === 1) this.holdOpen(true);
    child.stdin?.write(frame(type, id, strings));
    return id;
  }

  /** SIGKILLs the tool's process group, if it has not ended yet. */
  stop(id: number): void {
    if (this.jobs.has(id)) this.child?.stdin?.write(frame('K', id));
  }

  private holdOpen(on: boolean): void {
    if (this.child === undefined) return;
    if (on) this.child.ref();
    else this.child.unref();
    hold(this.child.stdout, on);
  }

  private launch(): ChildProcess {
    const { prctl, fallocate, mount, umount2, mountSetattr } = this.syscalls;
    const numbers = [prctl, process.pid, fallocate, mount, umount2, mountSetattr].map(String);
    const child = spawn(this.perl, ['-e', PROGRAM, ...numbers], {
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = child;
    this.pending = Buffer.alloc(0);
    this.proven = false;
    hold(child.stdin, false);
    child.stdout?.on('data', (b: Buffer) => this.read(b));
    // A write after the helper ended fails here, and 'close' below fails the tools it had.
    child.stdin?.on('error', () => {});
    const lost = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      const jobs = [...this.jobs.values()];
      this.jobs.clear();
      if (!this.proven) {
        // Nothing was started: the frames it was sent were never read by a running helper.
        log('warn', `${why} before it ran: system tools are started by forking the driver instead`);
        for (const job of jobs) endWithHelper(job, { kind: 'helper-unusable', why });
        return;
      }
      const calls = jobs.filter((job) => !('tool' in job)).length;
      log('warn', `${why}: the tools it was running were killed with it, and its system calls may or may not have been made; the next tool starts a new helper`, { tools: jobs.length - calls, systemCalls: calls });
      for (const job of jobs) endWithHelper(job, { kind: 'lost', why });
    };
    child.on('error', (e) => lost(`the tool helper could not run: ${e.message}`));
    child.on('close', (code, signal) => lost(`the tool helper ended (${signal ?? `exit ${code}`})`));
    return child;
  }

  private read(chunk: Buffer): void {
    let buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (buf.length >= 4) {
      const len = buf.readUInt32BE(0);
      if (buf.length < 4 + len) break;
      const type = String.fromCharCode(buf[4]!);
      const id = buf.readUInt32BE(5);
      const body = buf.subarray(9, 4 + len);
      buf = buf.subarray(4 + len);
      if (type === 'H') {
        this.proven = true;
        continue;
      }
      const job = this.jobs.get(id);
      if (job === undefined) continue;
      if (!('tool' in job)) {
        if (type !== 'D') continue;
        this.ended(id);
        const n = body.readUInt32BE(0);
        job.call(n === 0 ? { kind: 'done', answer: body.subarray(4).toString('utf8') } : { kind: 'failed', code: errnoNames.get(n) ?? `errno ${n}`, message: body.subarray(4).toString('utf8') });
        continue;
      }
      const sink = job.tool;
      if (type === 'O') sink.stdout(Buffer.from(body));
      else if (type === 'E') sink.stderr(Buffer.from(body));
      else if (type === 'X' || type === 'F') {
        this.ended(id);
        const n = body.readUInt32BE(0);
        if (type === 'F') sink.end({ kind: 'not-started', code: errnoNames.get(n) ?? `errno ${n}` });
        else {
          const sig = n & 0x7f;
          sink.end(sig === 0
            ? { kind: 'exited', code: (n >> 8) & 0xff, signal: null }
            : { kind: 'exited', code: null, signal: signalNames.get(sig) ?? 'SIGKILL' });
        }
      }
    }
    this.pending = buf.length === 0 ? Buffer.alloc(0) : Buffer.from(buf);
  }

  private ended(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.holdOpen(false);
  }
}
