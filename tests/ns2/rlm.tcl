# ns-2's own RLM receiver (McCanne's MMG / MMG/ns / Layer/ns classes, embedded in Debian's
# ns2 2.35 binary) on the topologies of McCanne, Jacobson and Vetterli (SIGCOMM 1996, §4):
#
#   topology (1), the default:   S --(1.5 Mb/s, DELAY, DropTail 20 pkts)-- R
#   topology (4), with pairs=N:  S_i --(10 Mb/s)-- X --(N x 1.5 Mb/s, DropTail QUEUE)-- Y
#                                --(10 Mb/s)-- R_i, i = 1..N, every link DELAY
#   topology (2), with high=N:   S --(1.5 Mb/s)-- X --(1.5 Mb/s)-- H_i, i = 1..N
#   topology (3), with high=N low=M: topology (2) plus X --(0.75 Mb/s)-- Y --(1.5 Mb/s)-- L_j,
#                                j = 1..M; every link of (2) and (3) DELAY, DropTail 20 pkts
#
# Each source carries six UDP/CBR layers at 32*2^m kb/s (m = 0..5), 1000-byte packets, with
# ns-2's CBR jitter (random_ 1: each interval is D + U(-D/2, D/2), the law of §4). In
# topology (1) the link out of S is the bottleneck's queue, so no separate router node is
# needed (a router behind an infinitely fast S-router link is the same network). Topology (4)
# is castlab's (python/castlab/experiments/rlm/topology.py: topology4): the paper gives neither the
# access links nor the per-pair share. Topologies (2) and (3) are built as castlab's topology2
# and topology3 (one session from S; receivers created H_1..H_N, then L_1..L_M, each drawing
# its start in that order).
#
# The RLM receivers are ns-2's MMG/ns, unchanged. This script only supplies what the embedded
# code expects its driver to define:
#   * trunc_exponential MEAN: an exponential with that mean, redrawn until below 4 * MEAN
#     (§4's join-timer law; MMG's set_TJ_timer adds MEAN / 2);
#   * Simulator create-agent NODE TYPE CLASS (defined only on ns-2's OldSim);
#   * ns-now (used by LossTrace);
#   * the control agent's destination: MMG/ns sets `dst_`, a field ns-2.35 no longer has (it is
#     dst_addr_/dst_port_ now; ns-2 prints a warning per agent), so without the fix the join
#     announcements would go to node 0 as unicast.
# Multicast is dense mode (§4: "similar to Dense-mode PIM"), with the prune timeout raised from
# ns-2's 0.5 s to 1e6 s as ns-2's own RLM example does (1000 s): otherwise every unsubscribed
# layer re-floods across the bottleneck twice a second.
#
# usage: ns rlm.tcl DELAY_S DURATION_S SEED START_S TRACE_FILE [KEY=VALUE ...]
#   START_S < 0: draw each receiver's start uniformly on [30, 120] s (§4) from the seeded RNG.
#   TRACE_FILE: ns-2 queue trace of the links into the receivers ("-": none); its "r" lines of
#     cbr packets are the receivers' arrivals, its "d" lines the drops on those links.
#   KEY=VALUE:
#     rearm=1 (default 0, ns-2 as shipped): after a layer is dropped, arm a join-timer if none
#       is pending. ns-2's MMG arms the next join-timer only when one fires (and on a
#       shared-learning backoff); at the top level there is no next layer, so after a failed
#       experiment to the top layer no timer is ever set again and the receiver never
#       re-probes it. With six layers on 1.5 Mb/s the top layer is the one that fails (ns-2's
#       own RLM example used seven layers).
#     pausetj=1 (default 0): castlab's join-timer arming instead of ns-2's, for a diagnosis: the
#       join-timer is cancelled on leaving S and drawn afresh on entering it. ns-2's MMG keeps
#       it running in H, M and D (a firing there only re-draws it).
#     pairs=N: topology (4) with N pairs; queue=Q: its shared link's queue (packets).
#     high=N [low=M]: topology (2) with N receivers, or (3) with N at B and M behind B/2. The
#       trace then holds only the "r" lines of the links into the receivers (a full queue
#       trace of 100 receivers would be gigabytes).
#     red=WQ: topology (1) with a RED bottleneck instead of DropTail, as castlab's rlm-red:
#       min_th 5, max_th 15, max_p 0.1, weight WQ, in packets, in the same 20-packet buffer;
#       not gentle, and ns-2's wait_ off (castlab's RED is Floyd and Jacobson's original).
#     nlm=N bneck=BPS starts=T1,T2,... [cross=START:RATE]: the topology of Figure 8 of Nakauchi,
#       Morikawa and Aoyama's NLM paper, as castlab's python/castlab/experiments/nlm/topology.py builds
#       it for RLM: S_i --(10 Mb/s)-- LMR1 --(BPS)-- LMR2 --(10 Mb/s)-- R_i, i = 1..N, every link
#       DELAY with DropTail 20 packets (LMR1 and LMR2 plain routers: RLM needs no LMR); five
#       layers of 100, 100, 200, 400, 800 kb/s in 1024-byte packets; receiver i starts at T_i
#       (START_S is ignored); with cross=, a 1024-byte CBR of RATE b/s from START s, from a node
#       X behind LMR1 to a node Y behind LMR2 (10 Mb/s links).
#     any rlm_param key (alpha, beta, init-tj, max, init-td, init-td-var, g1, g2): override the
#       value ns-2 ships (alpha 2, beta 0.75, init-tj 5, max 60, init-td 5, init-td-var 2,
#       g1 = g2 = 0.25).
# Prints (stdout), one event per line; NODE is the receiver's node id:
#   param KEY VALUE             the rlm_param values in force
#   rx NODE                     a receiver's node (in creation order)
#   start NODE T                a receiver's start
#   level NODE T N              subscription level after each change
#   loss NODE T LAYER COUNT     a sequence gap seen by a layer's LossTrace (LAYER 0-based)
#   end T                       the end of the run
# (ns-2 also prints "Warning dst_ is no longer being supported" lines; ignore them.)

set delay [lindex $argv 0]
set duration [lindex $argv 1]
set seed [lindex $argv 2]
set start [lindex $argv 3]
set tracefile [lindex $argv 4]
set rearm 0
set pairs 0
set qshared 20
set red 0
set high 0
set low 0
set pausetj 0
set nlm 0
set bneck 1.6e6
set starts {}
set cross {}
foreach kv [lrange $argv 5 end] {
    set k [lindex [split $kv =] 0]
    set v [lindex [split $kv =] 1]
    switch -- $k {
        rearm { set rearm $v }
        pairs { set pairs $v }
        queue { set qshared $v }
        red { set red $v }
        high { set high $v }
        pausetj { set pausetj $v }
        low { set low $v }
        nlm { set nlm $v }
        bneck { set bneck $v }
        starts { set starts [split $v ,] }
        cross { set cross [split $v :] }
        default {
            if {![info exists rlm_param($k)]} {
                puts stderr "rlm.tcl: unknown option `$k'"
                exit 2
            }
            set rlm_param($k) $v
        }
    }
}

set packet_bytes 1000
set rates {32e3 64e3 128e3 256e3 512e3 1024e3}
if {$nlm > 0} {
    set packet_bytes 1024
    set rates {100e3 100e3 200e3 400e3 800e3}
    if {[llength $starts] != $nlm} {
        puts stderr "rlm.tcl: nlm=$nlm needs starts= with $nlm times"
        exit 2
    }
}

# Two independent streams per seed: MRG32k3a substreams (seeding with small consecutive
# integers gives nearly equal first draws). The default RNG drives the CBR jitter
# (Random::uniform); rlm_rng the join-timers and start times.
global defaultRNG
$defaultRNG seed 12345
set rlm_rng [new RNG]
$rlm_rng seed 12345
for {set i 0} {$i <= $seed} {incr i} {
    $defaultRNG next-substream
    $rlm_rng next-substream
    $rlm_rng next-substream
}
$rlm_rng next-substream

proc trunc_exponential {mean} {
    global rlm_rng
    while 1 {
        set x [$rlm_rng exponential $mean]
        if {$x < 4 * $mean} {
            return $x
        }
    }
}

set ns [new Simulator -multicast on]
proc ns-now {} {
    global ns
    return [$ns now]
}
Simulator instproc create-agent {node type cls} {
    set a [new $type]
    $a set fid_ $cls
    $self attach-agent $node $a
    return $a
}

if {$tracefile != "-"} {
    set tf [open $tracefile w]
}
proc link {a b rate limit {trace 0}} {
    global ns delay tf tracefile
    $ns duplex-link $a $b $rate [expr $delay]s DropTail
    $ns queue-limit $a $b $limit
    $ns queue-limit $b $a $limit
    if {$trace && $tracefile != "-"} {
        $ns trace-queue $a $b $tf
    }
}

# A layered source at node S: one UDP agent + CBR per layer, each on its own group. Returns
# {control-group data-groups}.
proc source {S} {
    global ns rates packet_bytes
    set caddr [Node allocaddr]
    set addrs {}
    set i 0
    foreach r $rates {
        set g [Node allocaddr]
        lappend addrs $g
        set u [new Agent/UDP]
        $u set fid_ [expr $i + 1]
        $u set packetSize_ $packet_bytes
        $ns attach-agent $S $u
        $u set dst_addr_ $g
        $u set dst_port_ 0
        set c [new Application/Traffic/CBR]
        $c attach-agent $u
        $c set packetSize_ $packet_bytes
        $c set rate_ $r
        $c set random_ 1
        $ns at 0.0 "$c start"
        incr i
    }
    return [list $caddr $addrs]
}

# Our hooks: MMG calls dumpLevel (empty in ns-2) before and after every level change, and a
# LossTrace's log-loss on every gap. ns-2's log-loss body is kept verbatim under another name
# and called after printing, so the RLM logic is not touched.
MMG/ns instproc dumpLevel {} {
    $self instvar subscription_ last_printed_ node_
    if {![info exists last_printed_] || $last_printed_ != $subscription_} {
        set last_printed_ $subscription_
        puts "level [$node_ id] [ns-now] $subscription_"
    }
}
if {$rearm} {
    MMG/ns instproc drop-layer {} {
        $self next
        $self instvar timers_
        if {![info exists timers_(TJ)]} {
            $self set_TJ_timer
        }
    }
}
if {$pausetj} {
    MMG/ns instproc set-state {s} {
        $self instvar state_
        set old $state_
        $self next $s
        if {$s != "/S"} {
            $self cancel_timer TJ
        } elseif {$old != "/S"} {
            $self cancel_timer TJ
            $self set_TJ_timer
        }
    }
}
LossTrace instproc log-loss-ns2 [LossTrace info instargs log-loss] [LossTrace info instbody log-loss]
LossTrace instproc log-loss {} {
    $self instvar layerNo counted_ mmg_
    # nlost_ (bound to the C++ monitor) already includes this gap; seqno_ is not bound in 2.35
    set n [$self set nlost_]
    if {![info exists counted_] || $n < $counted_} {
        set counted_ 0
    }
    puts "loss [[$mmg_ node] id] [ns-now] $layerNo [expr $n - $counted_]"
    set counted_ $n
    $self log-loss-ns2
}

proc build_receiver {R session t} {
    global ns
    puts "start [$R id] $t"
    set m [new MMG/ns $ns $R [lindex $session 0] [lindex $session 1]]
    set ctrl [$m set ctrl_]
    $ctrl set dst_addr_ [lindex $session 0]
    $ctrl set dst_port_ 0
}
proc place_receiver {R session} {
    global ns start rlm_rng
    set t $start
    if {$t < 0} {
        set t [$rlm_rng uniform 30 120]
    }
    puts "rx [$R id]"
    $ns at $t "build_receiver $R {$session} $t"
}

# Receive events only of link A -> B into the trace (as SimpleLink's trace does for its rcvT_).
proc trace_arrivals {a b} {
    global ns tf tracefile
    if {$tracefile == "-"} {
        return
    }
    set l [$ns link $a $b]
    set ttl [$l set ttl_]
    set r [$ns create-trace Recv $tf $a $b]
    $r target [$ttl target]
    $ttl target $r
}

if {$nlm > 0} {
    set L1 [$ns node]
    set L2 [$ns node]
    link $L1 $L2 $bneck 20
    set sessions {}
    set receivers {}
    for {set i 0} {$i < $nlm} {incr i} {
        set S [$ns node]
        set R [$ns node]
        link $S $L1 10Mb 20
        link $L2 $R 10Mb 20
        trace_arrivals $L2 $R
        lappend sessions [source $S]
        lappend receivers $R
    }
    if {[llength $cross] == 2} {
        set CX [$ns node]
        set CY [$ns node]
        link $CX $L1 10Mb 20
        link $L2 $CY 10Mb 20
        set u [new Agent/UDP]
        $u set fid_ 99
        $u set packetSize_ $packet_bytes
        $ns attach-agent $CX $u
        set sink [new Agent/Null]
        $ns attach-agent $CY $sink
        $ns connect $u $sink
        set c [new Application/Traffic/CBR]
        $c attach-agent $u
        $c set packetSize_ $packet_bytes
        $c set rate_ [lindex $cross 1]
        $ns at [lindex $cross 0] "$c start"
    }
} elseif {$high > 0 || $low > 0} {
    set S [$ns node]
    set X [$ns node]
    link $S $X 1.5Mb 20
    set sessions {}
    set receivers {}
    set session [source $S]
    for {set i 0} {$i < $high} {incr i} {
        set R [$ns node]
        link $X $R 1.5Mb 20
        trace_arrivals $X $R
        lappend sessions $session
        lappend receivers $R
    }
    if {$low > 0} {
        set Y [$ns node]
        link $X $Y 0.75Mb 20
        for {set i 0} {$i < $low} {incr i} {
            set R [$ns node]
            link $Y $R 1.5Mb 20
            trace_arrivals $Y $R
            lappend sessions $session
            lappend receivers $R
        }
    }
} elseif {$pairs == 0} {
    set S [$ns node]
    set R [$ns node]
    if {$red > 0} {
        Queue/RED set bytes_ false
        Queue/RED set queue_in_bytes_ false
        Queue/RED set thresh_ 5
        Queue/RED set maxthresh_ 15
        Queue/RED set linterm_ 10
        Queue/RED set q_weight_ $red
        Queue/RED set gentle_ false
        Queue/RED set wait_ false
        Queue/RED set mean_pktsize_ $packet_bytes
        $ns duplex-link $S $R 1.5Mb [expr $delay]s RED
        $ns queue-limit $S $R 20
        $ns queue-limit $R $S 20
        if {$tracefile != "-"} {
            $ns trace-queue $S $R $tf
        }
    } else {
        link $S $R 1.5Mb 20 1
    }
    set sessions [list [source $S]]
    set receivers [list $R]
} else {
    set X [$ns node]
    set Y [$ns node]
    link $X $Y [expr $pairs * 1.5]Mb $qshared
    set sessions {}
    set receivers {}
    for {set i 0} {$i < $pairs} {incr i} {
        set S [$ns node]
        set R [$ns node]
        link $S $X 10Mb 20
        link $Y $R 10Mb 20 1
        lappend sessions [source $S]
        lappend receivers $R
    }
}
DM set PruneTimeout 1e6
$ns mrtproto DM {}

foreach k [lsort [array names rlm_param]] {
    puts "param $k $rlm_param($k)"
}
if {$nlm > 0} {
    foreach R $receivers s $sessions t $starts {
        puts "rx [$R id]"
        $ns at $t "build_receiver $R {$s} $t"
    }
} else {
    foreach R $receivers s $sessions {
        place_receiver $R $s
    }
}

proc finish {} {
    global ns tracefile tf
    puts "end [$ns now]"
    if {$tracefile != "-"} {
        close $tf
    }
    exit 0
}
$ns at $duration "finish"
$ns run
