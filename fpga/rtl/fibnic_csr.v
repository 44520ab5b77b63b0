// BAR0 CSR block (offsets 0x000..0xFFF): ID, VERSION, CAPS0..2 (read-only,
// from the build parameters), CONTROL, GENERATION, SCRATCH, PORT_MAC[p] and
// the read-only PORT_COUNTERS[p] (eight u64 each: rx, forwarded, punted,
// drop_ttl, drop_fifo, tx, rx_bytes, tx_bytes), counted from pipeline events,
// and DROP_COUNTERS[p] (one u64 each: frames a VALID|DROP entry discarded;
// CAPS2 bit 16 announces them and the NEXTHOP DROP flag).
module fibnic_csr #(
    parameter CODE_BITS = 2,
    parameter TCAM_ENTRIES = 32,
    parameter NEIGH_ENTRIES = 256,
    parameter NPORTS = 4,
    parameter SRAM_ADDR_BITS = 22
) (
    input  wire               clk,
    input  wire               rst,
    input  wire               host_we,
    input  wire [9:0]         host_word,   // byte offset >> 2
    input  wire [31:0]        host_wdata,
    input  wire [3:0]         host_wstrb,
    input  wire [9:0]         host_rword,
    output reg  [31:0]        host_rdata,
    output reg  [31:0]        control,
    output wire [NPORTS*48-1:0] port_macs, // port p in [48p+47:48p], first byte high
    // Counter events (one clock each).
    input  wire               ev_rx,
    input  wire [7:0]         ev_rx_port,
    input  wire [15:0]        ev_rx_bytes,
    input  wire               ev_out,      // a frame left the pipeline (or was dropped)
    input  wire [7:0]         ev_out_port, // its ingress port
    input  wire [4:0]         ev_out_reason,
    input  wire               ev_out_drop,
    input  wire               ev_tx,
    input  wire [7:0]         ev_tx_port,
    input  wire [15:0]        ev_tx_bytes
);
  `include "fibnic_defs.vh"

  localparam [31:0] CAPS0 = SRAM_ADDR_BITS | (CODE_BITS << 8) | (NPORTS << 16);
  localparam [31:0] CAPS1 = (1 << CODE_BITS) | (TCAM_ENTRIES << 16);
  localparam [31:0] CAPS2 = NEIGH_ENTRIES | CAPS2_DROP;
  localparam C_RX = 0, C_FWD = 1, C_PUNT = 2, C_TTL = 3, C_FIFO = 4, C_TX = 5, C_RXB = 6, C_TXB = 7;

  reg [31:0] generation, scratch;
  reg [31:0] mac_lo [0:NPORTS-1];  // BAR bytes 0..3 of PORT_MAC[p]
  reg [15:0] mac_hi [0:NPORTS-1];  // BAR bytes 4..5

  genvar g;
  generate
    for (g = 0; g < NPORTS; g = g + 1) begin : mac
      assign port_macs[48*g +: 48] = {mac_lo[g][7:0], mac_lo[g][15:8], mac_lo[g][23:16], mac_lo[g][31:24],
                                      mac_hi[g][7:0], mac_hi[g][15:8]};
    end
  endgenerate

  function automatic [31:0] merge(input [31:0] old, input [31:0] data, input [3:0] strb);
    integer b;
    begin
      merge = old;
      for (b = 0; b < 4; b = b + 1) if (strb[b]) merge[8*b +: 8] = data[8*b +: 8];
    end
  endfunction

  function automatic [15:0] merge16(input [15:0] old, input [15:0] data, input [1:0] strb);
    merge16 = {strb[1] ? data[15:8] : old[15:8], strb[0] ? data[7:0] : old[7:0]};
  endfunction

  wire [9:0] mac_base = OFF_PORT_MAC[11:2];
  wire [9:0] cnt_base = OFF_COUNTERS[11:2];
  wire [9:0] drop_base = OFF_DROP_COUNTERS[11:2];
  integer p;
  always @(posedge clk) begin
    if (rst) begin
      control <= 32'd0;
      generation <= 32'd0;
      scratch <= 32'd0;
      for (p = 0; p < NPORTS; p = p + 1) begin
        mac_lo[p] <= 32'd0;
        mac_hi[p] <= 16'd0;
      end
    end else if (host_we) begin
      if (host_word == OFF_CONTROL[11:2])    control    <= merge(control, host_wdata, host_wstrb);
      if (host_word == OFF_GENERATION[11:2]) generation <= merge(generation, host_wdata, host_wstrb);
      if (host_word == OFF_SCRATCH[11:2])    scratch    <= merge(scratch, host_wdata, host_wstrb);
      for (p = 0; p < NPORTS; p = p + 1) begin
        if (host_word == mac_base + 10'(2 * p)) mac_lo[p] <= merge(mac_lo[p], host_wdata, host_wstrb);
        if (host_word == mac_base + 10'(2 * p + 1))
          mac_hi[p] <= merge16(mac_hi[p], host_wdata[15:0], host_wstrb[1:0]);
      end
    end
  end

  // Counters: every event adds to the counter of the port it names.
  wire [NPORTS*8*64-1:0] counters;   // port p, counter c at [64*(8p+c) +: 64]
  wire [NPORTS*64-1:0] drop_counters; // port p at [64p +: 64]
  generate
    for (g = 0; g < NPORTS; g = g + 1) begin : cnt
      wire rx = ev_rx && ev_rx_port == g;
      wire out = ev_out && ev_out_port == g;
      wire tx = ev_tx && ev_tx_port == g;
      // Bit c increments counter c: tx_bytes rx_bytes tx drop_fifo drop_ttl punted forwarded rx.
      // A dropped frame (R_DROP) is neither forwarded nor punted: it has a counter of its own.
      wire [7:0] inc = {tx, rx, tx, out && ev_out_drop, out && !ev_out_drop && ev_out_reason == R_TTL,
                        out && !ev_out_drop && ev_out_reason != R_FORWARD && ev_out_reason != R_DROP,
                        out && !ev_out_drop && ev_out_reason == R_FORWARD, rx};
      wire [63:0] add [0:7];
      assign add[C_RX] = 64'd1;
      assign add[C_FWD] = 64'd1;
      assign add[C_PUNT] = 64'd1;
      assign add[C_TTL] = 64'd1;
      assign add[C_FIFO] = 64'd1;
      assign add[C_TX] = 64'd1;
      assign add[C_RXB] = {48'd0, ev_rx_bytes};
      assign add[C_TXB] = {48'd0, ev_tx_bytes};
      genvar c;
      for (c = 0; c < 8; c = c + 1) begin : one
        reg [63:0] value;
        always @(posedge clk)
          if (rst) value <= 64'd0;
          else if (inc[c]) value <= value + add[c];
        assign counters[64 * (8 * g + c) +: 64] = value;
      end
      reg [63:0] dropped;
      always @(posedge clk)
        if (rst) dropped <= 64'd0;
        else if (out && !ev_out_drop && ev_out_reason == R_DROP) dropped <= dropped + 64'd1;
      assign drop_counters[64 * g +: 64] = dropped;
    end
  endgenerate

  // Reads: registered.
  always @(posedge clk) begin
    host_rdata <= 32'd0;
    case (host_rword)
      OFF_ID[11:2]:         host_rdata <= FIBNIC_ID;
      OFF_VERSION[11:2]:    host_rdata <= FIBNIC_VERSION;
      OFF_CAPS0[11:2]:      host_rdata <= CAPS0;
      OFF_CAPS1[11:2]:      host_rdata <= CAPS1;
      OFF_CAPS2[11:2]:      host_rdata <= CAPS2;
      OFF_CONTROL[11:2]:    host_rdata <= control;
      OFF_GENERATION[11:2]: host_rdata <= generation;
      OFF_SCRATCH[11:2]:    host_rdata <= scratch;
      default: ;
    endcase
    for (p = 0; p < NPORTS; p = p + 1) begin
      if (host_rword == mac_base + 10'(2 * p))     host_rdata <= mac_lo[p];
      if (host_rword == mac_base + 10'(2 * p + 1)) host_rdata <= {16'd0, mac_hi[p]};
    end
    for (p = 0; p < NPORTS * 16; p = p + 1)
      if (host_rword == cnt_base + 10'(p))
        host_rdata <= counters[32 * p +: 32];
    for (p = 0; p < NPORTS * 2; p = p + 1)
      if (host_rword == drop_base + 10'(p))
        host_rdata <= drop_counters[32 * p +: 32];
  end
endmodule
