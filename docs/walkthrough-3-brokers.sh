#!/usr/bin/env bash
# A deployment on three brokers, every role its own process (docs/operations.md, "A deployment on three brokers"):
# a 3-broker KRaft cluster (ringshift kafka), 2 orchestrators, 2 publishers, 2 workers, a health manager, 7 nodes in
# 3 zones, a writer while node-7 joins, an audit, a cancelled join. Bounded in time, 127.0.0.1 only; it stops every
# process it started when it ends.
set -u
# Usage: docs/walkthrough-3-brokers.sh [WORK_DIR]   (default: a new temporary directory; needs ports 7101-7107, 8101-8107)
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
"$root/ringshift" --version > /dev/null   # builds the CLI once if needed
R="$root/cli/target/ringshift.jar"
W=${1:-$(mktemp -d)}; mkdir -p "$W"; cd "$W"; : > $W/pids
rs() { java -Xmx256m -jar $R "$@" --timeout 30; }
bg() { name=$1; shift; java -Xmx256m -jar $R "$@" > $W/$name.log 2>&1 & echo $! >> $W/pids; until grep -q "Ctrl-C\|standing by\|ringshift:" $W/$name.log; do sleep 0.5; done; }
trap 'kill $(cat $W/pids) 2>/dev/null; sleep 3; kill -9 $(cat $W/pids) 2>/dev/null' EXIT
bg kafka kafka --brokers 3
until grep -q "Ctrl-C" $W/kafka.log; do sleep 1; done
cat $W/kafka.log
export RINGSHIFT_BOOTSTRAP=$(sed -n 's/  bootstrap: //p' $W/kafka.log)
echo '$ ringshift topics create'; rs topics create
echo '$ ringshift keygen --out publisher.key'; java -jar $R keygen --out publisher.key
head -c 32 /dev/urandom | base64 > admin.secret
zones=(az-1 az-2 az-3)
: > nodes.txt; : > client-ports.txt
for i in 1 2 3 4 5 6 7; do
  z=${zones[$(( (i-1) % 3 ))]}
  bg node-$i node --id node-$i --zone $z --data-dir n$i --port $((7100+i)) --admin-secret-file admin.secret --trusted-key publisher.key.pub
  echo "node-$i 127.0.0.1:$((8100+i))" >> nodes.txt
  echo "node-$i 127.0.0.1:$((7100+i))" >> client-ports.txt
done
printf '[\n' > members.json
for i in 1 2 3 4 5 6; do z=${zones[$(( (i-1) % 3 ))]}; sep=,; [ $i = 6 ] && sep=; printf '  {"id": "node-%s", "zone": "%s"}%s\n' $i $z $sep >> members.json; done
printf ']\n' >> members.json
bg orchestrator-1 orchestrator --state-dir s1 --timeout 30
bg orchestrator-2 orchestrator --state-dir s2 --timeout 30
bg publisher-1 publisher --signing-key publisher.key --timeout 30
bg publisher-2 publisher --signing-key publisher.key --timeout 30
bg worker-1 worker --timeout 30 --worker-id worker-1 --nodes nodes.txt --node-secret-file admin.secret --trusted-key publisher.key.pub --grace 30s
bg worker-2 worker --timeout 30 --worker-id worker-2 --nodes nodes.txt --node-secret-file admin.secret --trusted-key publisher.key.pub --grace 30s
bg health health-manager --nodes client-ports.txt --timeout 30
for f in orchestrator-1 orchestrator-2 publisher-1 publisher-2 worker-1 node-1 health; do echo "== $f"; head -3 $W/$f.log; done
echo '$ ringshift topics check'; rs topics check
echo '$ ringshift init --members members.json --wait 120'; rs init --members members.json --wait 120
echo '$ ringshift load --keys 20000 --rate 1000 --value-size 1KiB --duration 100s --verify ... &'
rs load --keys 20000 --rate 1000 --value-size 1KiB --duration 100s --verify --trusted-key publisher.key.pub --nodes client-ports.txt > load.log 2>&1 &
LOAD=$!
sleep 30
echo '$ ringshift plan join node-7 --zone az-1 --nodes nodes.txt --node-secret-file admin.secret --rate 100MiB --limit 3'
rs plan join node-7 --zone az-1 --nodes nodes.txt --node-secret-file admin.secret --rate 100MiB --limit 3
t0=$(date +%s.%N)
echo '$ ringshift join node-7 --zone az-1 --wait'
rs join node-7 --zone az-1 --wait
t1=$(date +%s.%N)
echo "join took $(echo "$t1 - $t0" | bc) s"
echo '$ ringshift status'; rs status --limit 3
wait $LOAD
echo '$ cat load.log'; cat load.log
echo '$ ringshift audit --trusted-key publisher.key.pub'; java -jar $R audit --trusted-key publisher.key.pub
echo '$ ringshift join node-9 --zone az-3   # a node nobody started'; rs join node-9 --zone az-3
sleep 8
echo '$ ringshift cancel'; rs cancel
echo '$ ringshift status --watch 2 --until-idle'; timeout 120 java -Xmx256m -jar $R status --watch 2 --until-idle --limit 3
