# Issue 14's NewReno row for ns-2.35, the same scenario as castlab's protocols bench `tcp100`
# (crates/castlab-sim/benches/protocols.rs, `newreno100`):
#
#   s_i --(100 Mb/s, 1 ms)-- r1 --(10 Mb/s, 20 ms, DropTail)-- r2 --(100 Mb/s, 1 ms)-- d_i
#
# FLOWS one-way Agent/TCP/Newreno flows to Agent/TCPSink with FTP, flow i starting at i * 0.05 s,
# 1000-byte segments (1040 on the wire). The bottleneck queue holds one bandwidth-delay product:
# castlab's 53 waiting packets (10 Mb/s * 44 ms / 1040 B), which is ns-2's queue-limit 54 (ns-2
# counts the packet in service; docs/engine.md, "Links"). The TCP parameters are set to
# castlab's TcpConfig defaults where ns-2 differs, as tests/ns2/dumbbell.tcl does. No trace
# files: the run only simulates.
#
# usage: ns newreno_dumbbell.tcl FLOWS DURATION_S
# Prints "done T acked A" at the end (A: the flows' cumulative ACKs, in segments).

set flows [lindex $argv 0]
set duration [lindex $argv 1]

set ns [new Simulator]

Agent/TCP set packetSize_ 1000
Agent/TCP set window_ 1000000
Agent/TCP set windowInit_ 2
Agent/TCP set maxburst_ 0
Agent/TCP set overhead_ 0
Agent/TCP set tcpTick_ 0.001
Agent/TCP set minrto_ 1.0
Agent/TCP set rtxcur_init_ 1.0
Agent/TCP set maxrto_ 60
Agent/TCP set timestamps_ false
Agent/TCPSink set packetSize_ 40

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 20ms DropTail
$ns queue-limit $r1 $r2 54
$ns queue-limit $r2 $r1 54

set tcps {}
for {set i 0} {$i < $flows} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 100Mb 1ms DropTail
    $ns duplex-link $r2 $d 100Mb 1ms DropTail
    $ns queue-limit $s $r1 10001
    $ns queue-limit $r1 $s 10001
    $ns queue-limit $r2 $d 10001
    $ns queue-limit $d $r2 10001
    set tcp [new Agent/TCP/Newreno]
    $tcp set fid_ $i
    set sink [new Agent/TCPSink]
    $ns attach-agent $s $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [expr $i * 0.05] "$ftp start"
    lappend tcps $tcp
}

proc finish {} {
    global tcps duration
    set acked 0
    foreach t $tcps { incr acked [$t set ack_] }
    puts "done $duration acked $acked"
    exit 0
}
$ns at $duration "finish"
$ns run
