// The forwarding decision: 20 clocks from the parser's fire to a record the
// egress stage turns into the leading tag and the rewrite.
//   clock 0      framing/header checks (reason order = fpga/model/punt_reason.h),
//                snapshot of the lookup key; SRAM4 and TCAM6 lookups start
//   clock 3..5   SRAM4 code (3 clocks) or TCAM6 winner (2 clocks) -> NEXTHOP
//   clock 8      IPv6: low 64 destination bits are in (stream index 62);
//                late IPv6 checks (header length, NDP type); NEIGH search starts
//   clock 19     NEIGH result (final after clock 18) -> combine -> record
//                written into the egress FIFO at this edge
// Every fire takes exactly 19 clocks, so records come out in frame order.
// Fires that need a lookup are >= 50 clocks apart (a frame must carry its IP
// header), so the key registers serve one lookup at a time; the per-fire
// shift register carries what short punted frames need.
module fibnic_decide #(
    parameter CODE_BITS = 2,
    parameter NPORTS = 4
) (
    input  wire         clk,
    input  wire         rst,
    // Parser.
    input  wire         fire,
    input  wire         fire_ended,
    input  wire [7:0]   in_port,
    input  wire         in_frame,
    input  wire [10:0]  flen,
    input  wire         rx_dv,
    input  wire [7:0]   rx_data,
    input  wire [47:0]  dmac,
    input  wire [15:0]  etype,
    input  wire [7:0]   ip_b0,
    input  wire [7:0]   v4_ttl,
    input  wire [7:0]   v4_proto,
    input  wire [15:0]  v4_csum,
    input  wire [19:0]  v4_sum,
    input  wire [31:0]  v4_dst,
    input  wire [7:0]   v6_next,
    input  wire [7:0]   v6_hop,
    input  wire [127:0] v6_dst,
    // Device state.
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [31:0]  control,       // bits 1:0 used, the rest reserved
    input  wire [7:0]   nh_flags,      // bits 2:0 used, the rest reserved
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire [NPORTS*48-1:0] port_macs,
    // Tables.
    output wire [23:0]  sram_slash24,
    input  wire [3:0]   sram_code,
    output wire [63:0]  tcam_key,
    input  wire         tcam_hit,
    input  wire [7:0]   tcam_index,
    input  wire [7:0]   tcam_code,
    output wire [CODE_BITS-1:0] nh_code,
    input  wire [47:0]  nh_mac,
    input  wire [7:0]   nh_port,
    output wire         neigh_start,
    output wire [127:0] neigh_key,
    input  wire         neigh_hit,
    input  wire [47:0]  neigh_mac,
    input  wire [7:0]   neigh_port,
    // Record (one per frame, in frame order).
    output reg          rec_push,
    output reg  [4:0]   rec_reason,
    output reg  [7:0]   rec_in_port,
    output reg  [7:0]   rec_eport,
    output reg  [7:0]   rec_code,
    output reg  [7:0]   rec_tcam,
    output reg  [47:0]  rec_dmac,
    output reg  [47:0]  rec_smac,
    output reg  [7:0]   rec_ttl,
    output reg  [15:0]  rec_csum,
    output reg          rec_v6
);
  `include "fibnic_defs.vh"

  localparam DEPTH = 19;                    // fire .. record, in clocks
  localparam LATE = 8;                      // IPv6 late checks, NEIGH start
  localparam [7:0] NH_ENTRIES = 8'd1 << CODE_BITS;

  // ---- clock 0: checks on what the parser holds --------------------------
  wire is_v4 = etype == 16'h0800;
  wire is_v6 = etype == 16'h86DD;
  wire [16:0] sum1 = {1'b0, v4_sum[15:0]} + {13'd0, v4_sum[19:16]};
  wire [15:0] sum2 = sum1[15:0] + {15'd0, sum1[16]};
  function automatic [47:0] mac_of(input [NPORTS*48-1:0] macs, input [7:0] port);
    integer p;
    begin
      mac_of = 48'd0;
      for (p = 0; p < NPORTS; p = p + 1) if (port == p[7:0]) mac_of = macs[48*p +: 48];
    end
  endfunction
  wire own_ok = in_port < NPORTS && dmac == mac_of(port_macs, in_port);

  reg [4:0] early;
  always @(*) begin
    if (flen < 11'd14 || (is_v4 && flen < 11'd34) || (is_v6 && fire_ended && flen < 11'd54))
      early = R_RUNT;
    else if (dmac == 48'hFFFFFFFFFFFF) early = R_BROADCAST;
    else if (dmac[40])                 early = R_MULTICAST;
    else if (!own_ok)                  early = R_OWN_MAC;
    else if (etype == 16'h0806)        early = R_ARP;
    else if (is_v4) begin
      if (ip_b0[7:4] != 4'd4 || ip_b0[3:0] < 4'd5) early = R_IP_HEADER;
      else if (ip_b0[3:0] != 4'd5)                  early = R_IP_OPTIONS;
      else if (sum2 != 16'hFFFF)                    early = R_CHECKSUM;
      else if (v4_ttl <= 8'd1)                      early = R_TTL;
      else                                          early = R_FORWARD;
    end else if (is_v6) begin
      if (ip_b0[7:4] != 4'd6)    early = R_IP_HEADER;
      else if (v6_next == 8'd0)  early = R_IP_OPTIONS;
      else if (v6_hop <= 8'd1)   early = R_TTL;
      else                       early = R_FORWARD;
    end else early = R_NON_IP;
  end

  wire late_v6 = is_v6 && !fire_ended && flen >= 11'd14;
  wire look_now = fire && (early == R_FORWARD || late_v6);

  // ---- per-fire shift register -------------------------------------------
  // Packed shift registers, entry k = the fire k+1 clocks ago.
  reg [DEPTH-1:0]   s_vld;
  reg [5*DEPTH-1:0] s_rsn;
  reg [8*DEPTH-1:0] s_port;
  reg [DEPTH-1:0]   s_late;    // IPv6 frame still arriving at fire: check later
  reg [DEPTH-1:0]   s_look;    // owns the key registers

  // ---- key registers (one lookup in flight) ------------------------------
  reg         k_v6, k_en;
  reg [31:0]  k_dst4;
  reg [63:0]  k_hi;
  reg [7:0]   k_ttl, k_proto;
  reg [15:0]  k_csum;

  assign sram_slash24 = k_dst4[31:8];
  assign tcam_key = k_hi;
  wire [7:0] code = k_v6 ? tcam_code : {4'd0, sram_code};
  assign nh_code = code[CODE_BITS-1:0];
  assign neigh_start = s_vld[LATE-1] && s_look[LATE-1];
  assign neigh_key = k_v6 ? {k_hi, v6_dst[63:0]} : {80'd0, 16'hFFFF, k_dst4};

  // Late IPv6 checks at stream index 62: offset 53 has arrived, offset 54
  // (the ICMPv6 type) is on rx_data right now if the frame is that long.
  wire late_runt = flen < 11'd54 || (v6_next == 8'd58 && !(in_frame && rx_dv));
  wire late_ndp = v6_next == 8'd58 && rx_data >= 8'd133 && rx_data <= 8'd137;
  reg [4:0] late_rsn;
  always @(*) begin
    late_rsn = s_rsn[5*(LATE-1) +: 5];
    if (s_late[LATE-1]) begin
      if (late_runt) late_rsn = R_RUNT;
      else if (late_rsn == R_FORWARD && late_ndp) late_rsn = R_NDP;
    end
  end

  always @(posedge clk) begin
    if (rst) begin
      s_vld <= {DEPTH{1'b0}};
    end else begin
      s_vld  <= {s_vld[DEPTH-2:0], fire};
      s_rsn  <= {s_rsn[5*DEPTH-6 : 5*LATE], late_rsn, s_rsn[5*LATE-6 : 0], early};
      s_port <= {s_port[8*DEPTH-9:0], in_port};
      s_late <= {s_late[DEPTH-2:0], late_v6};
      s_look <= {s_look[DEPTH-2:0], look_now};
    end
    if (look_now) begin
      k_v6    <= is_v6;
      k_en    <= is_v6 ? control[1] : control[0];
      k_dst4  <= v4_dst;
      k_hi    <= v6_dst[127:64];
      k_ttl   <= is_v6 ? v6_hop : v4_ttl;
      k_proto <= v4_proto;
      k_csum  <= v4_csum;
    end
  end

  // ---- clock 19: combine (HwLookup order: disabled, TCAM, code, NEXTHOP, DROP, NEIGH)
  localparam L = DEPTH - 1;
  wire        connected = nh_flags[1];
  wire [7:0]  eport = connected ? neigh_port : nh_port;
  wire [47:0] emac = connected ? neigh_mac : nh_mac;
  wire [15:0] m_old = {k_ttl, k_proto};
  wire [15:0] m_new = {k_ttl - 8'd1, k_proto};
  wire [17:0] cs1 = {2'd0, ~k_csum} + {2'd0, ~m_old} + {2'd0, m_new};
  wire [16:0] cs2 = {1'b0, cs1[15:0]} + {15'd0, cs1[17:16]};
  wire [15:0] cs3 = cs2[15:0] + {15'd0, cs2[16]};

  // Combinational, written into the egress FIFO at this clock's edge: the
  // record of an IPv4 frame is there one clock before its tag must leave.
  always @(*) begin
    rec_push = !rst && s_vld[L];
    rec_in_port = s_port[8*L +: 8];
    rec_reason = s_rsn[5*L +: 5];
    rec_code = 8'd0;
    rec_tcam = 8'hFF;
    rec_eport = 8'd0;
    rec_dmac = emac;
    rec_smac = mac_of(port_macs, eport);
    rec_ttl = k_ttl - 8'd1;
    rec_csum = ~cs3;
    rec_v6 = k_v6;
    if (s_rsn[5*L +: 5] == R_FORWARD) begin
      if (!k_en) rec_reason = R_DISABLED;
      else if (k_v6 && !tcam_hit) rec_reason = R_NO_TCAM;
      else begin
        rec_code = code;
        if (k_v6) rec_tcam = tcam_index;
        if (code == 8'd0 || code >= NH_ENTRIES) rec_reason = R_CODE0;
        else if (!nh_flags[0]) rec_reason = R_NH_INVALID;
        else if (nh_flags[2]) rec_reason = R_DROP;  // its port, MAC and CONNECTED are not read
        else if (connected && !neigh_hit) rec_reason = R_NEIGH_MISS;
        else if (eport >= NPORTS) rec_reason = R_PORT;
        else rec_eport = eport;
      end
    end
  end
endmodule
