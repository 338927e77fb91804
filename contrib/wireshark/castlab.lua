-- Wireshark / tshark dissector for castlab's own wire format: the envelope of castlab-net
-- (crates/castlab-net/src/envelope.rs) around castlab_core's packet codec
-- (crates/castlab-core/src/codec.rs). PGM sessions (`--wire pgm`) are RFC 3208 and need no
-- script: tshark -d udp.port==PORT,pgm.
--
--   tshark -X lua_script:contrib/wireshark/castlab.lua -r capture.pcap
--   wireshark -X lua_script:contrib/wireshark/castlab.lua capture.pcap
--
-- It claims UDP datagrams that start with the magic "CLAB": on castlab's default ports (the
-- port base 47000 and the 64 ports above it, where another dissector may be registered) and, as
-- a heuristic dissector, on any other port.
-- Field names: castlab.session, castlab.kind, castlab.seq, castlab.pgm.kind... (see below).

local p = Proto("castlab", "castlab envelope")

local header_kinds = { [0] = "data", [1] = "control", [2] = "tcp", [3] = "rlm", [4] = "nlm", [6] = "pgm", [7] = "bcf" }
local body_len = { [0] = 0, [1] = 26, [2] = 57, [3] = 7, [4] = 16, [6] = 17, [7] = 18 }
local pgm_kinds = { [1] = "ODATA", [2] = "RDATA", [3] = "NAK", [4] = "NCF", [5] = "SPM" }
local rlm_kinds = { [1] = "join", [2] = "session" }
local nlm_kinds = { [1] = "data", [2] = "DROP_REQ", [3] = "ADD_REQ", [4] = "SESS" }
local bcf_kinds = { [1] = "request", [2] = "reply" }

local f = {
  magic = ProtoField.string("castlab.magic", "Magic"),
  version = ProtoField.uint8("castlab.version", "Envelope version"),
  flags = ProtoField.uint8("castlab.flags", "Flags", base.HEX),
  codec_len = ProtoField.uint16("castlab.codec_len", "Codec length"),
  session = ProtoField.uint32("castlab.session", "Session id"),
  epoch = ProtoField.uint64("castlab.epoch", "Session epoch (sender's start, Unix ns)"),
  mac = ProtoField.bytes("castlab.mac", "MAC (HMAC-SHA256, truncated)"),
  codec_version = ProtoField.uint8("castlab.codec_version", "Codec version"),
  dst_kind = ProtoField.uint8("castlab.dst_kind", "Destination kind", base.DEC, { [0] = "unicast", [1] = "group" }),
  kind = ProtoField.uint8("castlab.kind", "Header kind", base.DEC, header_kinds),
  marked = ProtoField.uint8("castlab.marked", "Marked"),
  src_node = ProtoField.uint32("castlab.src_node", "Source node"),
  src_port = ProtoField.uint16("castlab.src_port", "Source port"),
  layer = ProtoField.uint8("castlab.layer", "Layer"),
  dst = ProtoField.uint32("castlab.dst", "Destination node or group"),
  dst_port = ProtoField.uint16("castlab.dst_port", "Destination port"),
  size = ProtoField.uint32("castlab.size", "Size (bytes)"),
  flow = ProtoField.uint32("castlab.flow", "Flow"),
  seq = ProtoField.uint64("castlab.seq", "Sequence number"),
  uid = ProtoField.uint64("castlab.uid", "Packet uid"),
  sent_at = ProtoField.uint64("castlab.sent_at_ns", "Sent at (ns)"),
  body = ProtoField.bytes("castlab.body", "Header body"),
  pgm_kind = ProtoField.uint8("castlab.pgm.kind", "PGM kind", base.DEC, pgm_kinds),
  pgm_trail = ProtoField.uint64("castlab.pgm.trail", "PGM trail"),
  pgm_lead = ProtoField.uint64("castlab.pgm.lead", "PGM lead"),
  rlm_kind = ProtoField.uint8("castlab.rlm.kind", "RLM kind", base.DEC, rlm_kinds),
  rlm_level = ProtoField.uint8("castlab.rlm.level", "RLM level"),
  nlm_kind = ProtoField.uint8("castlab.nlm.kind", "NLM kind", base.DEC, nlm_kinds),
  bcf_kind = ProtoField.uint8("castlab.bcf.kind", "BCF kind", base.DEC, bcf_kinds),
  tcp_ack = ProtoField.uint64("castlab.tcp.ack", "TCP ack"),
  tcp_flags = ProtoField.uint8("castlab.tcp.flags", "TCP flags", base.HEX),
  padding = ProtoField.bytes("castlab.padding", "Padding"),
  app_len = ProtoField.uint16("castlab.app_len", "Application bytes length"),
  app = ProtoField.bytes("castlab.app", "Application bytes"),
}
p.fields = f

local e_malformed = ProtoExpert.new("castlab.malformed", "Malformed castlab envelope", expert.group.MALFORMED,
  expert.severity.ERROR)
p.experts = { e_malformed }

local function dissect(buf, pinfo, tree)
  local n = buf:len()
  if n < 20 or buf(0, 4):string() ~= "CLAB" then
    return 0
  end
  pinfo.cols.protocol = "castlab"
  local t = tree:add(p, buf(), "castlab envelope")
  t:add(f.magic, buf(0, 4))
  t:add(f.version, buf(4, 1))
  t:add(f.flags, buf(5, 1))
  t:add(f.codec_len, buf(6, 2))
  t:add(f.session, buf(8, 4))
  t:add(f.epoch, buf(12, 8))
  local clen = buf(6, 2):uint()
  local at = 20
  if buf(4, 1):uint() ~= 2 then
    t:add_proto_expert_info(e_malformed, "envelope version " .. buf(4, 1):uint() .. ", not 2")
    return n
  end
  if bit.band(buf(5, 1):uint(), 1) == 1 then
    if n < 36 then
      t:add_proto_expert_info(e_malformed, "MAC flagged, datagram too short")
      return n
    end
    t:add(f.mac, buf(20, 16))
    at = 36
  end
  if clen < 52 or at + clen > n then
    t:add_proto_expert_info(e_malformed, "codec length " .. clen .. " does not fit")
    return n
  end
  local c = buf(at, clen)
  local kind = c(2, 1):uint()
  t:add(f.codec_version, c(0, 1))
  t:add(f.dst_kind, c(1, 1))
  t:add(f.kind, c(2, 1))
  t:add(f.marked, c(3, 1))
  t:add(f.src_node, c(4, 4))
  t:add(f.src_port, c(8, 2))
  t:add(f.layer, c(10, 1))
  t:add(f.dst, c(12, 4))
  t:add(f.dst_port, c(16, 2))
  t:add(f.size, c(20, 4))
  t:add(f.flow, c(24, 4))
  t:add(f.seq, c(28, 8))
  t:add(f.uid, c(36, 8))
  t:add(f.sent_at, c(44, 8))
  local want = body_len[kind]
  local info = (header_kinds[kind] or ("kind " .. kind)) .. " flow " .. c(24, 4):uint() .. " seq " .. tostring(c(28, 8):uint64())
  if want == nil or clen ~= 52 + want then
    t:add_proto_expert_info(e_malformed, "header body of " .. (clen - 52) .. " bytes for kind " .. kind)
  elseif want > 0 then
    local b = c(52, want)
    local bt = t:add(f.body, b)
    if kind == 6 then
      bt:add(f.pgm_kind, b(0, 1))
      bt:add(f.pgm_trail, b(1, 8))
      bt:add(f.pgm_lead, b(9, 8))
      info = "PGM " .. (pgm_kinds[b(0, 1):uint()] or "?") .. " flow " .. c(24, 4):uint() .. " seq " .. tostring(c(28, 8):uint64())
    elseif kind == 3 then
      bt:add(f.rlm_kind, b(0, 1))
      bt:add(f.rlm_level, b(1, 1))
    elseif kind == 4 then
      bt:add(f.nlm_kind, b(0, 1))
    elseif kind == 7 then
      bt:add(f.bcf_kind, b(0, 1))
    elseif kind == 2 then
      bt:add(f.tcp_ack, b(0, 8))
      bt:add(f.tcp_flags, b(8, 1))
    end
  end
  local rest = at + clen
  -- flag bit 1: a u16 length and that many application bytes follow the codec
  if bit.band(buf(5, 1):uint(), 2) == 2 then
    if rest + 2 > n or rest + 2 + buf(rest, 2):uint() > n then
      t:add_proto_expert_info(e_malformed, "application bytes flagged, datagram too short")
      return n
    end
    local m = buf(rest, 2):uint()
    t:add(f.app_len, buf(rest, 2))
    if m > 0 then
      t:add(f.app, buf(rest + 2, m))
    end
    rest = rest + 2 + m
  end
  if rest < n then
    t:add(f.padding, buf(rest, n - rest))
  end
  pinfo.cols.info = "castlab session " .. buf(8, 4):uint() .. ": " .. info
  return n
end

p.dissector = dissect

local function heuristic(buf, pinfo, tree)
  if buf:len() < 20 or buf(0, 4):string() ~= "CLAB" then
    return false
  end
  dissect(buf, pinfo, tree)
  return true
end

p:register_heuristic("udp", heuristic)

-- On castlab's default ports the port table is asked first: a datagram without the magic is
-- handed back (0 bytes taken) to the other dissectors.
local udp_table = DissectorTable.get("udp.port")
for port = 47000, 47063 do
  udp_table:add(port, p)
end
