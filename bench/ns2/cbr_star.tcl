# The CBR star for ns-2.35, the same scenario as castlab's engine bench (c)
# (crates/castlab-sim/benches/engine.rs, `star`):
#
#   S --(10 Mb/s)-- R1 --(1.5 Mb/s, DropTail)-- R2 --(10 Mb/s)-- X_i, i = 1..N
#
# every link 10 ms, one 992 kb/s CBR source at S (1000-byte packets, ns-2's jitter: random_ 1)
# sending to one multicast group that every X_i joins at t = 0, dense-mode multicast with the
# prune timeout raised out of the way (as tests/ns2/rlm.tcl does), no trace files: the run
# only simulates. castlab's DropTail 20 waiting packets is ns-2's queue-limit 21 (see
# docs/engine.md, "Links"); the source stays below the bottleneck, so nothing is dropped.
# Each receiver is a Null agent: ns-2 delivers every packet to it, as castlab's sinks receive.
#
# usage: ns cbr_star.tcl RECEIVERS DURATION_S
# Prints "done T" at the end (ns-2 has no event counter to print).

set n [lindex $argv 0]
set duration [lindex $argv 1]

set ns [new Simulator -multicast on]
DM set PruneTimeout 1e6

set s [$ns node]
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $s $r1 10Mb 10ms DropTail
$ns duplex-link $r1 $r2 1.5Mb 10ms DropTail
$ns queue-limit $s $r1 21
$ns queue-limit $r1 $r2 21
set rx {}
for {set i 0} {$i < $n} {incr i} {
    set x [$ns node]
    $ns duplex-link $r2 $x 10Mb 10ms DropTail
    $ns queue-limit $r2 $x 21
    lappend rx $x
}

set mproto DM
set mrthandle [$ns mrtproto $mproto {}]
set group [Node allocaddr]

set udp [new Agent/UDP]
$ns attach-agent $s $udp
$udp set dst_addr_ $group
$udp set dst_port_ 0
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1000
$cbr set rate_ 992Kb
$cbr set random_ 1
$cbr attach-agent $udp

foreach x $rx {
    set sink [new Agent/Null]
    $ns attach-agent $x $sink
    $ns at 0.0 "$x join-group $sink $group"
}

$ns at 0.0 "$cbr start"
$ns at $duration "puts \"done $duration\"; exit 0"
$ns run
