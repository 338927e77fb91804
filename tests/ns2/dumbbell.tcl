# The dumbbell of tests/protocols/test_tcp.py::test_goodput_matches_ns2, in ns-2 (Debian's ns2 2.35):
#   s_i --(100 Mb/s, 1 ms)-- r1 --(10 Mb/s, 20 ms, DropTail QUEUE pkts)-- r2 --(100 Mb/s, 1 ms)-- d_i
# FLOWS one-way TCP flows (Agent/TCP/Reno or Agent/TCP/Newreno + Agent/TCPSink) with 1000-byte
# segments (1040 on the wire, as castlab's mss 1000 + 40 bytes of headers), flow i starting at
# i * 0.5 s. The agents' parameters are set to castlab's TcpConfig defaults where ns-2 differs.
# Prints, per flow: "flow I ACKED_AT_WARMUP ACKED_AT_END ACKS_AT_WARMUP ACKS_AT_END" (cumulative
# ACK, in segments; ACK packets the sender has received, nackpack_).
#
# usage: ns dumbbell.tcl VARIANT FLOWS QUEUE WARMUP_S END_S [SINK]
#   VARIANT: Reno or Newreno; SINK: TCPSink (default) or TCPSink/DelAck (delayed ACKs, with
#   castlab's 200 ms delayed-ACK timer in place of ns-2's 100 ms interval_)

set variant [lindex $argv 0]
set flows [lindex $argv 1]
set qlimit [lindex $argv 2]
set warm [lindex $argv 3]
set end [lindex $argv 4]
set sinktype [expr {[llength $argv] > 5 ? [lindex $argv 5] : "TCPSink"}]

set ns [new Simulator]

Agent/TCP set packetSize_ 1000      ;# payload; ns-2 adds tcpip_base_hdr_size_ = 40
Agent/TCP set window_ 1000000       ;# castlab rwnd 1 GiB: the congestion window governs
Agent/TCP set windowInit_ 2         ;# RFC 2581 IW, castlab initial_window_segs = 2
Agent/TCP set maxburst_ 0
Agent/TCP set overhead_ 0
Agent/TCP set tcpTick_ 0.001        ;# castlab clock granularity G = 1 ms
Agent/TCP set minrto_ 1.0           ;# RFC 6298 §2.4, castlab min_rto
Agent/TCP set rtxcur_init_ 1.0      ;# RFC 6298 §2.1 initial RTO
Agent/TCP set maxrto_ 60            ;# RFC 6298 §2.5
Agent/TCP set timestamps_ false     ;# keep 40-byte headers
Agent/TCPSink set packetSize_ 40
Agent/TCPSink/DelAck set interval_ 0.2    ;# castlab delayed_ack_timeout (RFC 1122 §4.2.3.2)

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 20ms DropTail
$ns queue-limit $r1 $r2 $qlimit

set tcps {}
for {set i 0} {$i < $flows} {incr i} {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 100Mb 1ms DropTail
    $ns duplex-link $r2 $d 100Mb 1ms DropTail
    $ns queue-limit $s $r1 10000
    $ns queue-limit $r1 $s 10000
    $ns queue-limit $r2 $d 10000
    $ns queue-limit $d $r2 10000
    set tcp [new Agent/TCP/$variant]
    $tcp set fid_ $i
    set sink [new Agent/$sinktype]
    $ns attach-agent $s $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [expr $i * 0.5] "$ftp start"
    lappend tcps $tcp
}

set atwarm {}
proc mark {} {
    global tcps atwarm
    foreach t $tcps { lappend atwarm [list [$t set ack_] [$t set nackpack_]] }
}
proc finish {} {
    global tcps atwarm
    set i 0
    foreach t $tcps {
        set w [lindex $atwarm $i]
        puts "flow $i [lindex $w 0] [$t set ack_] [lindex $w 1] [$t set nackpack_]"
        incr i
    }
    exit 0
}
$ns at $warm "mark"
$ns at $end "finish"
$ns run
