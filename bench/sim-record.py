#!/usr/bin/env python3
"""bench/sim-record.py: the recording that `bench/run --simulate N` answers from, made from gpuctl's host logs.

  bench/sim-record.py BED_ENV OUT.jsonl RUN_DIR...

BED_ENV is `testbed/bed env` of the bed the logs came from (1 master h0 + workers h1, h2, ...); each RUN_DIR is one
run's log directory under .gpuctl/logs (a no-op re-run of bootstrap, a verify). The master's log (h0) and the first
worker's (h1) are read: every command with its exit status and output, the step that asked it and the run's mode.
Host-specific parts become tokens the simulated hosts fill in with their own identity:

  @M_NAME@ @M_IP@      the master's name and address
  @W_NAME@ @W_IP@      the worker's (in a worker's own answers; in the master's answers, lines about worker h1 are
                       marked @EACH_WORKER@ and repeated for every simulated worker; lines about other workers go)
  @MID@ @PUUID@        the host's own machine-id and product UUID
  @GPU0@ ...           the worker's GPU UUIDs
  @SUBNET@ @GW@        the bed's network and its gateway (the time server)
  @NOW@                `date +%s.%N` is answered with the simulation's clock
  @S@                  the seconds of a `timeout N` (verify gives a command what is left of its wait)
  @HASH@               the content hash in the name of a manifest gpuctl put on the master
  @CLIENT_KEY_SHA256@  the SHA-256 of admin.conf's client key (the simulation's laptop kubeconfig holds a stand-in)

The logs are already masked by gpuctl (tokens, keys, key data); the simulated host masks each command the same way
before it looks it up. One JSON object a line: {"role", "mode", "step", "command", "exit", "stdout", "stderr"}.
"""
import json
import re
import sys

# how MasterLock's command starts (its holder line differs each run): a hold entry matches by this prefix
LOCK_PREFIX = 'umask 077; me=$(id -u); unsafe() {'
MANIFEST = re.compile(r'(/etc/kubernetes/gpuctl/[a-z0-9-]+?)-[0-9a-f]{8}\.yaml')
TIMEOUT = re.compile(r'\btimeout [0-9]+ ')
TS = re.compile(r'^\d{4}-\d\d-\d\dT[0-9:.]+Z (.*)$')
EXIT = re.compile(r'^  exit (-?\d+) (.*)$')


def bed_env(path):
    env = {}
    for line in open(path, encoding='utf-8'):
        m = re.match(r'^(\w+)=(.*)$', line.strip())
        if m:
            env[m.group(1)] = m.group(2).strip('"')
    return env


def entries(path):
    """(text of each log entry) in order: an entry starts with a timestamp, its continuation lines follow."""
    cur = None
    for raw in open(path, encoding='utf-8'):
        line = raw.rstrip('\n')
        m = TS.match(line)
        if m:
            if cur is not None:
                yield cur
            cur = [m.group(1)]
        elif cur is not None:
            cur.append(line)
    if cur is not None:
        yield cur


def commands(path):
    """(step, command, exit, stdout, stderr) of every command entry whose output is logged (not 'the same answer')."""
    step = ''
    for e in entries(path):
        head = e[0]
        m = re.match(r'^-- step ([\w-]+): ', head)
        if m:
            step = m.group(1)
            continue
        if not head.startswith('$ '):
            continue
        cmd = [head[2:]]
        i = 1
        while i < len(e) and not EXIT.match(e[i]):
            cmd.append(e[i])
            i += 1
        if i == len(e):
            continue
        ex = EXIT.match(e[i])
        if 'the same answer as above' in ex.group(2):
            continue
        out, err, cur = [], [], None
        for line in e[i + 1:]:
            if line == '  stdout:':
                cur = out
            elif line == '  stderr:':
                cur = err
            elif cur is not None:
                cur.append(line[4:] if line.startswith('    ') else line)
        if len(out) > 1 and '\t' in out[-2]:
            # the log strips the output's trailing whitespace: the last line's empty last fields (tab-separated) are
            # put back from the line before it of the same kind
            kind = out[-1].split('\t', 1)[0]
            before = [l for l in out[:-1] if l.split('\t', 1)[0] == kind]
            if before and before[-1].count('\t') > out[-1].count('\t'):
                out[-1] += '\t' * (before[-1].count('\t') - out[-1].count('\t'))
        text = lambda ls: ('\n'.join(ls) + '\n') if ls else ''
        yield step, '\n'.join(cmd), int(ex.group(1)), text(out), text(err)


def word(name):
    # a host name as a word of its own: not inside base64, a hex string or a longer name
    return re.compile(r'(?<![A-Za-z0-9+/=])' + re.escape(name) + r'(?![A-Za-z0-9+/=])')


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    env = bed_env(argv[1])
    subnet = env['BED_SUBNET']                      # 10.213.141.0/24
    gw = env['BED_NTP']
    addr = {h: env['BED_ADDR_' + h] for h in env['BED_HOSTS'].split()}
    others = [h for h in addr if h not in ('h0', 'h1')]
    ip = lambda a: re.compile(re.escape(a) + r'(?![0-9])')
    out = []
    seen = set()
    for run in argv[3:]:
        mode = 'verify' if run.rstrip('/').endswith('-verify') else 'rerun'
        for host, role in (('h0', 'master'), ('h1', 'worker')):
            log = list(commands(run.rstrip('/') + '/' + host + '.log'))
            ident = {}
            gpus = []
            for step, cmd, ex, so, se in log:
                if cmd.startswith('hostname; cat /etc/machine-id'):
                    lines = so.split('\n')
                    ident['@MID@'] = lines[1] if len(lines) > 1 else ''
                    if len(lines) > 2 and lines[2]:
                        ident['@PUUID@'] = lines[2]
                for g in re.findall(r'GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', so if role == 'worker' else ''):
                    if g not in gpus:
                        gpus.append(g)
            if role == 'master':
                # worker h1's GPUs as the master's answers name them
                wlog = list(commands(run.rstrip('/') + '/h1.log'))
                for _, _, _, so, _ in wlog:
                    for g in re.findall(r'GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', so):
                        if g not in gpus:
                            gpus.append(g)

            def norm(text, worker_line=False):
                # the manifests' file names carry a hash of their content, which has the pod CIDR patched in
                text = MANIFEST.sub(r'\1-@HASH@.yaml', text)
                # verify's waits are what is left of the run's wait when asked
                text = TIMEOUT.sub('timeout @S@ ', text)
                for k, v in ident.items():
                    if v:
                        text = text.replace(v, k)
                for i, g in enumerate(gpus):
                    text = text.replace(g, '@GPU%d@' % i)
                text = text.replace(subnet, '@SUBNET@')
                text = ip(addr['h0']).sub('@M_IP@', text)
                text = ip(addr['h1']).sub('@W_IP@', text)
                text = ip(gw).sub('@GW@', text)
                text = word('h0').sub('@M_NAME@', text)
                text = word('h1').sub('@W_NAME@', text)
                return text

            def master_out(text):
                text = re.sub(r'(?m)^client-key-sha256 [0-9a-f]{64}$', 'client-key-sha256 @CLIENT_KEY_SHA256@', text)
                lines = []
                for line in text.split('\n'):
                    if any(word(h).search(line) or ip(addr[h]).search(line) for h in others):
                        continue  # another worker's line: h1's stands for every worker
                    n = norm(line)
                    if '@W_NAME@' in n or '@W_IP@' in n:
                        n = '@EACH_WORKER@' + n
                    lines.append(n)
                return '\n'.join(lines)

            for step, cmd, ex, so, se in log:
                c = norm(cmd)
                if cmd == 'date +%s.%N':
                    so = '@NOW@\n'
                key = (role, c)
                if key in seen:
                    continue
                seen.add(key)
                fix = master_out if role == 'master' else norm
                out.append({'role': role, 'mode': mode, 'step': step, 'command': c, 'exit': ex, 'stdout': fix(so), 'stderr': fix(se)})
        # the bootstrap lock (Remote.hold) is not a logged command; the re-run's master log says it was taken
        if mode == 'rerun' and 'bootstrap lock taken on h0' in open(run.rstrip('/') + '/h0.log', encoding='utf-8').read():
            out.append({'role': 'master', 'mode': mode, 'step': 'lock', 'hold': True, 'command': LOCK_PREFIX, 'exit': -1,
                        'stdout': 'gpuctl-lock: held\n', 'stderr': ''})
    with open(argv[2], 'w', encoding='utf-8') as f:
        for o in out:
            f.write(json.dumps(o, ensure_ascii=False) + '\n')
    print('%s: %d answers (%d master, %d worker)' % (argv[2], len(out), sum(o['role'] == 'master' for o in out),
                                                   sum(o['role'] == 'worker' for o in out)), file=sys.stderr)


if __name__ == '__main__':
    main(sys.argv)
