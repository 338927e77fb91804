# ns-2's own RLM receiver (McCanne's MMG / MMG/ns / Layer/ns classes, embedded in Debian's
# ns2 2.35 binary) on RLM topology (1) of McCanne, Jacobson and Vetterli (SIGCOMM 1996, §4):
#
#   S --(1.5 Mb/s, DELAY, DropTail 20 pkts)-- R
#
# S carries six UDP/CBR layers at 32*2^m kb/s (m = 0..5), 1000-byte packets, with ns-2's CBR
# jitter (random_ 1: each interval is D + U(-D/2, D/2), the law of §4). The links out of S are
# the bottleneck's queue, so no separate router node is needed (a router behind an infinitely
# fast S-router link is the same network). The RLM receiver at R is ns-2's MMG/ns, unchanged;
# this script only supplies what the embedded code expects its driver to define:
#   * trunc_exponential MEAN: an exponential with that mean, redrawn until below 4 * MEAN
#     (§4's join-timer law; MMG's set_TJ_timer adds MEAN / 2);
#   * Simulator create-agent NODE TYPE CLASS (defined only on ns-2's OldSim);
#   * ns-now (used by LossTrace);
#   * the control agent's destination: MMG/ns sets `dst_`, a field ns-2.35 no longer has (it is
#     dst_addr_/dst_port_ now), so without the fix the join announcements go to node 0 unicast.
# Multicast is dense mode (§4: "similar to Dense-mode PIM"), with the prune timeout raised from
# ns-2's 0.5 s to 1e6 s as ns-2's own RLM example does (1000 s): otherwise every unsubscribed
# layer re-floods across the bottleneck twice a second.
# rlm_param (alpha 2, beta 0.75, init-tj 5, max 60, init-td 5, init-td-var 2, g1 = g2 = 0.25) is
# left at the values ns-2 ships unless overridden with KEY=VALUE arguments (e.g. max=600).
#
# rearm=1 (default 0, ns-2 as shipped): after a layer is dropped, arm a join-timer if none is
# pending. ns-2's MMG arms the next join-timer only when one fires (and on a shared-learning
# backoff); at the top level there is no next layer, so after a failed experiment to the top
# layer no timer is ever set again and the receiver never re-probes it. With six layers and a
# 1.5 Mb/s link the top layer is the one that fails (ns-2's RLM example used seven layers).
#
# usage: ns rlm.tcl DELAY_S DURATION_S SEED START_S TRACE_FILE [KEY=VALUE ...]
#   START_S < 0: draw the receiver's start uniformly on [30, 120] s (§4) from the seeded RNG.
#   TRACE_FILE: ns-2 queue trace of the S->R link ("-": none); its "r" lines of cbr packets
#   are the receiver's arrivals, its "d" lines the bottleneck drops.
# Prints (stdout), one event per line:
#   param KEY VALUE          the rlm_param values in force
#   start T                  the receiver's start
#   level T N                subscription level after each change
#   loss T LAYER COUNT       a sequence gap seen by a layer's LossTrace (LAYER 0-based)
#   end T NPKTS NLOST        totals of the receiver's loss monitors at the end

set delay [lindex $argv 0]
set duration [lindex $argv 1]
set seed [lindex $argv 2]
set start [lindex $argv 3]
set tracefile [lindex $argv 4]
set rearm 0
foreach kv [lrange $argv 5 end] {
    set k [lindex [split $kv =] 0]
    if {$k == "rearm"} {
        set rearm [lindex [split $kv =] 1]
        continue
    }
    if {![info exists rlm_param($k)]} {
        puts stderr "rlm.tcl: unknown rlm_param `$k'"
        exit 2
    }
    set rlm_param($k) [lindex [split $kv =] 1]
}

set packet_bytes 1000
set rates {32e3 64e3 128e3 256e3 512e3 1024e3}

global defaultRNG
$defaultRNG seed [expr $seed + 1]     ;# CBR jitter (Random::uniform) and ns-random
set rlm_rng [new RNG]
$rlm_rng seed [expr 2 * $seed + 7]    ;# join-timers and the start time

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

# --- the topology
set S [$ns node]
set R [$ns node]
$ns duplex-link $S $R 1.5Mb [expr $delay]s DropTail
$ns queue-limit $S $R 20
$ns queue-limit $R $S 20
if {$tracefile != "-"} {
    set tf [open $tracefile w]
    $ns trace-queue $S $R $tf
}
DM set PruneTimeout 1e6
$ns mrtproto DM {}

# --- the layered source at S: one UDP agent + CBR per layer, each on its own group
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

# --- the receiver
if {$start < 0} {
    set start [$rlm_rng uniform 30 120]
}
foreach k [lsort [array names rlm_param]] {
    puts "param $k $rlm_param($k)"
}
# Our hooks: MMG calls dumpLevel (empty in ns-2) before and after every level change, and a
# LossTrace's log-loss on every gap. ns-2's log-loss body is kept verbatim under another name
# and called after printing, so the RLM logic is not touched.
MMG/ns instproc dumpLevel {} {
    $self instvar subscription_ last_printed_
    if {![info exists last_printed_] || $last_printed_ != $subscription_} {
        set last_printed_ $subscription_
        puts "level [ns-now] $subscription_"
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
LossTrace instproc log-loss-ns2 [LossTrace info instargs log-loss] [LossTrace info instbody log-loss]
LossTrace instproc log-loss {} {
    $self instvar layerNo counted_
    # nlost_ (bound to the C++ monitor) already includes this gap; seqno_ is not bound in 2.35
    set n [$self set nlost_]
    if {![info exists counted_] || $n < $counted_} {
        set counted_ 0
    }
    puts "loss [ns-now] $layerNo [expr $n - $counted_]"
    set counted_ $n
    $self log-loss-ns2
}

proc build_receiver {} {
    global ns R caddr addrs rcvr start
    puts "start $start"
    set rcvr [new MMG/ns $ns $R $caddr $addrs]
    set ctrl [$rcvr set ctrl_]
    $ctrl set dst_addr_ $caddr
    $ctrl set dst_port_ 0
}
$ns at $start "build_receiver"

proc finish {} {
    global rcvr ns tracefile tf
    set npkts 0
    set nlost 0
    if {[info exists rcvr]} {
        set npkts [$rcvr mmg_pkts]
        set nlost [$rcvr mmg_loss]
    }
    puts "end [$ns now] $npkts $nlost"
    if {$tracefile != "-"} {
        close $tf
    }
    exit 0
}
$ns at $duration "finish"
$ns run
