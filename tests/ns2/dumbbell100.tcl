# Many NewReno (or Reno) flows on one 10 Mb/s dumbbell, in ns-2 (Debian's ns2 2.35), counter by
# counter beside castlab (tests/ns2/tcp100_compare.py):
#   s_i --(100 Mb/s, 1 ms)-- r1 --(10 Mb/s, 20 ms, DropTail QUEUE)-- r2 --(100 Mb/s, 1 ms)-- d_i
# FLOWS one-way TCP flows (Agent/TCP/VARIANT + Agent/TCPSink, or TCPSink/Sack1 for Sack1; FTP), 1000-byte segments (1040 on
# the wire), flow i starting at the i-th time of STARTS_FILE (one number a line, seconds; "-":
# flow i at i * 5 / FLOWS s). The
# agents' parameters are set to castlab's TcpConfig defaults where ns-2's differ; KEY=VALUE
# arguments after the fixed ones override any Agent/TCP/VARIANT variable (e.g. minrto_=0.2,
# exit_recovery_fix_=1) to ablate.
# Prints per flow "flow I ACK_WARM ACK_END REXMITPACK_WARM REXMITPACK_END TIMEOUTS_WARM
# TIMEOUTS_END DATAPACK_WARM DATAPACK_END" (segments), and writes the bottleneck's queue trace to
# TRACE_FILE ("-" for none): its "r" lines at r2 are the data segments that reach the sinks.
#
# usage: ns dumbbell100.tcl VARIANT FLOWS QUEUE WARMUP_S END_S STARTS_FILE TRACE_FILE [VAR=VALUE ...]

set variant [lindex $argv 0]
set flows [lindex $argv 1]
set qlimit [lindex $argv 2]
set warm [lindex $argv 3]
set end [lindex $argv 4]
set startsf [lindex $argv 5]
set tracef [lindex $argv 6]

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
foreach kv [lrange $argv 7 end] {
    set p [split $kv =]
    Agent/TCP/$variant set [lindex $p 0] [lindex $p 1]
}

if {$startsf == "-"} {
    # no file: flow i starts at i * 5 / FLOWS s (bench/tcp100.py does the same)
    set starts {}
    for {set i 0} {$i < $flows} {incr i} { lappend starts [expr 5.0 * $i / $flows] }
} else {
    set fh [open $startsf r]
    set starts [split [string trim [read $fh]] "\n"]
    close $fh
}

set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 20ms DropTail
$ns queue-limit $r1 $r2 $qlimit
if {$tracef != "-"} {
    set tf [open $tracef w]
    $ns trace-queue $r1 $r2 $tf
}

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
    # Sack1 needs its SACK-generating sink (max_sack_blocks_ 3, RFC 2018's three with timestamps)
    if {$variant == "Sack1"} { set sink [new Agent/TCPSink/Sack1] } else { set sink [new Agent/TCPSink] }
    $ns attach-agent $s $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [lindex $starts $i] "$ftp start"
    lappend tcps $tcp
}

proc counters {t} {
    return [list [$t set ack_] [$t set nrexmitpack_] [$t set nrexmit_] [$t set ndatapack_]]
}
set atwarm {}
proc mark {} {
    global tcps atwarm
    foreach t $tcps { lappend atwarm [counters $t] }
}
proc finish {} {
    global tcps atwarm tracef tf
    if {$tracef != "-"} { close $tf }
    set i 0
    foreach t $tcps {
        set w [lindex $atwarm $i]
        set e [counters $t]
        puts "flow $i [lindex $w 0] [lindex $e 0] [lindex $w 1] [lindex $e 1] [lindex $w 2] [lindex $e 2] [lindex $w 3] [lindex $e 3]"
        incr i
    }
    exit 0
}
$ns at $warm "mark"
$ns at $end "finish"
$ns run
