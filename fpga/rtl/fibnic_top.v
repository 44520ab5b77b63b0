// FIBNIC lookup + rewrite pipeline for one ingress port, with the BAR0
// register block and the forwarding tables it reads.
//   Host side: a 32-bit BAR0 target (byte address, byte strobes). Writes take
//   one clock; a read returns bar_rdata with bar_rvalid 3 clocks after
//   bar_re, the address held meanwhile (PCI target wait states).
//   Line side: 8-bit GMII-style receive stream at 125 MHz (preamble and SFD
//   included, 8 bytes) in; the tagged, rewritten stream out.
module fibnic_top #(
    parameter CODE_BITS = 2,          // SRAM4: 2 (4 MiB) or 4 (8 MiB)
    parameter TCAM_ENTRIES = 32,
    parameter NEIGH_ENTRIES = 256,
    parameter NEIGH_BANKS = 32,
    parameter NPORTS = 4
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        bar_we,
    input  wire [24:0] bar_waddr,
    input  wire [31:0] bar_wdata,
    input  wire [3:0]  bar_wstrb,
    input  wire        bar_re,
    input  wire [24:0] bar_raddr,
    output reg  [31:0] bar_rdata,
    output reg         bar_rvalid,
    input  wire        rx_dv,
    input  wire [7:0]  rx_data,
    input  wire [7:0]  rx_port,
    output wire        tx_dv,
    output wire [7:0]  tx_data,
    output wire        tx_sof,
    output wire        tx_eof
);
  `include "fibnic_defs.vh"

  localparam SRAM_ADDR_BITS = 22;
  localparam SLOT_BITS = (CODE_BITS == 4) ? 3 : 4;
  localparam SRAM_WORD_BITS = 24 - SLOT_BITS;
  localparam TW = (TCAM_ENTRIES > 1) ? $clog2(TCAM_ENTRIES) : 1;
  localparam NW = $clog2(NEIGH_ENTRIES);

  // ---- BAR decode -----------------------------------------------------------
  function automatic [2:0] region(input [24:0] a);
    // 0 CSR, 1 NEXTHOP, 2 TCAM6, 3 NEIGH, 4 SRAM4, 7 nothing
    if (a >= OFF_SRAM4)
      region = ((a - OFF_SRAM4) >> 2) < (25'd1 << SRAM_WORD_BITS) ? 3'd4 : 3'd7;
    else if (a < OFF_NEXTHOP) region = 3'd0;
    else if (a < OFF_NEXTHOP + (25'd16 << CODE_BITS)) region = 3'd1;
    else if (a >= OFF_TCAM6 && a < OFF_TCAM6 + 25'(32 * TCAM_ENTRIES)) region = 3'd2;
    else if (a >= OFF_NEIGH && a < OFF_NEIGH + 25'(32 * NEIGH_ENTRIES)) region = 3'd3;
    else region = 3'd7;
  endfunction

  wire [2:0]  wreg = region(bar_waddr);
  wire [2:0]  rreg = region(bar_raddr);
  // Region-relative byte addresses; each table takes the word-index bits it needs.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [24:0] w_nh = bar_waddr - OFF_NEXTHOP, r_nh = bar_raddr - OFF_NEXTHOP;
  wire [24:0] w_tc = bar_waddr - OFF_TCAM6,   r_tc = bar_raddr - OFF_TCAM6;
  wire [24:0] w_ne = bar_waddr - OFF_NEIGH,   r_ne = bar_raddr - OFF_NEIGH;
  wire [24:0] w_sr = bar_waddr - OFF_SRAM4,   r_sr = bar_raddr - OFF_SRAM4;
  /* verilator lint_on UNUSEDSIGNAL */

  wire [31:0] rd_csr, rd_nh, rd_tc, rd_ne, rd_sr;
  reg  [2:0]  rreg_d, rreg_dd;
  reg         re_d, re_dd;
  always @(posedge clk) begin
    rreg_d <= rreg;
    rreg_dd <= rreg_d;
    re_d <= bar_re && !rst;
    re_dd <= re_d;
    bar_rvalid <= re_dd;
    case (rreg_dd)
      3'd0: bar_rdata <= rd_csr;
      3'd1: bar_rdata <= rd_nh;
      3'd2: bar_rdata <= rd_tc;
      3'd3: bar_rdata <= rd_ne;
      3'd4: bar_rdata <= rd_sr;
      default: bar_rdata <= 32'd0;
    endcase
  end

  // ---- device state and tables -------------------------------------------
  wire [31:0] control;
  wire [NPORTS*48-1:0] port_macs;
  wire        ev_rx, ev_out, ev_out_drop, ev_tx;
  wire [7:0]  ev_rx_port, ev_out_port, ev_tx_port;
  wire [4:0]  ev_out_reason;
  wire [15:0] ev_rx_bytes, ev_tx_bytes;

  fibnic_csr #(.CODE_BITS(CODE_BITS), .TCAM_ENTRIES(TCAM_ENTRIES), .NEIGH_ENTRIES(NEIGH_ENTRIES),
               .NPORTS(NPORTS), .SRAM_ADDR_BITS(SRAM_ADDR_BITS)) csr (
      .clk(clk), .rst(rst),
      .host_we(bar_we && wreg == 3'd0), .host_word(bar_waddr[11:2]), .host_wdata(bar_wdata),
      .host_wstrb(bar_wstrb), .host_rword(bar_raddr[11:2]), .host_rdata(rd_csr),
      .control(control), .port_macs(port_macs),
      .ev_rx(ev_rx), .ev_rx_port(ev_rx_port), .ev_rx_bytes(ev_rx_bytes),
      .ev_out(ev_out), .ev_out_port(ev_out_port), .ev_out_reason(ev_out_reason), .ev_out_drop(ev_out_drop),
      .ev_tx(ev_tx), .ev_tx_port(ev_tx_port), .ev_tx_bytes(ev_tx_bytes));

  wire [23:0] sram_slash24;
  wire [3:0]  sram_code;
  fibnic_sram4 #(.CODE_BITS(CODE_BITS), .ADDR_BITS(SRAM_ADDR_BITS)) sram (
      .clk(clk), .host_we(bar_we && wreg == 3'd4), .host_word(w_sr[SRAM_WORD_BITS+1:2]),
      .host_wdata(bar_wdata), .host_wstrb(bar_wstrb), .host_rword(r_sr[SRAM_WORD_BITS+1:2]),
      .host_rdata(rd_sr), .lk_slash24(sram_slash24), .lk_code(sram_code));

  wire [63:0] tcam_key;
  wire        tcam_hit;
  wire [7:0]  tcam_index, tcam_code;
  fibnic_tcam6 #(.ENTRIES(TCAM_ENTRIES)) tcam (
      .clk(clk), .host_we(bar_we && wreg == 3'd2), .host_word(w_tc[TW+4:2]), .host_wdata(bar_wdata),
      .host_wstrb(bar_wstrb), .host_rword(r_tc[TW+4:2]), .host_rdata(rd_tc),
      .lk_key(tcam_key), .lk_hit(tcam_hit), .lk_index(tcam_index), .lk_code(tcam_code));

  wire [CODE_BITS-1:0] nh_code;
  wire [47:0] nh_mac;
  wire [7:0]  nh_port, nh_flags;
  fibnic_nexthop #(.CODE_BITS(CODE_BITS)) nexthop (
      .clk(clk), .host_we(bar_we && wreg == 3'd1), .host_word(w_nh[CODE_BITS+3:2]), .host_wdata(bar_wdata),
      .host_wstrb(bar_wstrb), .host_rword(r_nh[CODE_BITS+3:2]), .host_rdata(rd_nh),
      .lk_code(nh_code), .lk_mac(nh_mac), .lk_port(nh_port), .lk_flags(nh_flags));

  wire         neigh_start, neigh_hit;
  wire [127:0] neigh_key;
  wire [47:0]  neigh_mac;
  wire [7:0]   neigh_port;
  fibnic_neigh_cam #(.ENTRIES(NEIGH_ENTRIES), .BANKS(NEIGH_BANKS)) neigh (
      .clk(clk), .rst(rst), .host_we(bar_we && wreg == 3'd3), .host_word(w_ne[NW+4:2]),
      .host_wdata(bar_wdata), .host_wstrb(bar_wstrb), .host_rword(r_ne[NW+4:2]), .host_rdata(rd_ne),
      .lk_start(neigh_start), .lk_key(neigh_key), .lk_hit(neigh_hit), .lk_mac(neigh_mac),
      .lk_port(neigh_port));

  // The NEIGH search reads one row per clock and must end within the 20-clock
  // lookup budget (docs/fpga.md): at most 8 rows. A build that breaks it does
  // not elaborate (the module named below does not exist).
  generate
    if (NEIGH_ENTRIES / NEIGH_BANKS > 8) begin : neigh_budget
      fibnic_neigh_cam_rows_exceed_lookup_budget too_many_rows ();
    end
  endgenerate

  // ---- pipeline -------------------------------------------------------------
  wire         in_frame, end_now, fire, fire_ended, crc_ok;
  wire [7:0]   in_port;
  wire [10:0]  flen;
  wire [47:0]  dmac;
  wire [15:0]  etype, v4_csum;
  wire [7:0]   ip_b0, v4_ttl, v4_proto, v6_next, v6_hop;
  wire [19:0]  v4_sum;
  wire [31:0]  v4_dst;
  wire [127:0] v6_dst;
  fibnic_rx_parser parser (
      .clk(clk), .rst(rst), .rx_dv(rx_dv), .rx_data(rx_data), .rx_port(rx_port),
      .in_port(in_port), .in_frame(in_frame), .end_now(end_now), .flen(flen), .fire(fire),
      .fire_ended(fire_ended), .crc_ok(crc_ok), .dmac(dmac), .etype(etype), .ip_b0(ip_b0),
      .v4_ttl(v4_ttl), .v4_proto(v4_proto), .v4_csum(v4_csum), .v4_sum(v4_sum), .v4_dst(v4_dst),
      .v6_next(v6_next), .v6_hop(v6_hop), .v6_dst(v6_dst));

  assign ev_rx = end_now;
  assign ev_rx_port = in_port;
  assign ev_rx_bytes = {5'd0, flen};

  wire        rec_push, rec_v6;
  wire [4:0]  rec_reason;
  wire [7:0]  rec_in_port, rec_eport, rec_code, rec_tcam, rec_ttl;
  wire [47:0] rec_dmac, rec_smac;
  wire [15:0] rec_csum;
  fibnic_decide #(.CODE_BITS(CODE_BITS), .NPORTS(NPORTS)) decide (
      .clk(clk), .rst(rst), .fire(fire), .fire_ended(fire_ended), .in_port(in_port),
      .in_frame(in_frame), .flen(flen), .rx_dv(rx_dv), .rx_data(rx_data), .dmac(dmac), .etype(etype),
      .ip_b0(ip_b0), .v4_ttl(v4_ttl), .v4_proto(v4_proto), .v4_csum(v4_csum), .v4_sum(v4_sum),
      .v4_dst(v4_dst), .v6_next(v6_next), .v6_hop(v6_hop), .v6_dst(v6_dst), .control(control),
      .port_macs(port_macs), .sram_slash24(sram_slash24), .sram_code(sram_code), .tcam_key(tcam_key),
      .tcam_hit(tcam_hit), .tcam_index(tcam_index), .tcam_code(tcam_code), .nh_code(nh_code),
      .nh_mac(nh_mac), .nh_port(nh_port), .nh_flags(nh_flags), .neigh_start(neigh_start),
      .neigh_key(neigh_key), .neigh_hit(neigh_hit), .neigh_mac(neigh_mac), .neigh_port(neigh_port),
      .rec_push(rec_push), .rec_reason(rec_reason), .rec_in_port(rec_in_port), .rec_eport(rec_eport),
      .rec_code(rec_code), .rec_tcam(rec_tcam), .rec_dmac(rec_dmac), .rec_smac(rec_smac),
      .rec_ttl(rec_ttl), .rec_csum(rec_csum), .rec_v6(rec_v6));

  fibnic_egress egress (
      .clk(clk), .rst(rst), .rx_dv(rx_dv), .rx_data(rx_data), .rx_end_bad(end_now && !crc_ok),
      .rec_push(rec_push), .rec_reason(rec_reason), .rec_in_port(rec_in_port), .rec_eport(rec_eport),
      .rec_code(rec_code), .rec_tcam(rec_tcam), .rec_dmac(rec_dmac), .rec_smac(rec_smac),
      .rec_ttl(rec_ttl), .rec_csum(rec_csum), .rec_v6(rec_v6),
      .tx_dv(tx_dv), .tx_data(tx_data), .tx_sof(tx_sof), .tx_eof(tx_eof),
      .ev_out(ev_out), .ev_out_port(ev_out_port), .ev_out_reason(ev_out_reason), .ev_out_drop(ev_out_drop),
      .ev_tx(ev_tx), .ev_tx_port(ev_tx_port), .ev_tx_bytes(ev_tx_bytes));
endmodule
