// SRAM4: the IPv4 table, one CODE_BITS-wide next-hop code per /24.
// Modelled as a dual-port synchronous SRAM organised in 32-bit words (byte
// order as in the BAR, so a host write of one BAR word is one SRAM write):
// port A belongs to the host (PCI), port B to the lookup, so the host can
// rewrite the table while lookups run at one per clock (thesis 5.2.3).
// Lookup latency: slash24 registered, memory read, code selected = 3 clocks.
module fibnic_sram4 #(
    parameter CODE_BITS = 2,          // 2 (4 MiB) or 4 (8 MiB)
    parameter ADDR_BITS = 22,         // SRAM address bus of 8-bit (or 16-bit) words
    localparam SLOT_BITS = (CODE_BITS == 4) ? 3 : 4,   // codes per 32-bit word: 8 or 16
    localparam WORD_BITS = ADDR_BITS - 2 + (CODE_BITS == 4 ? 1 : 0)  // 32-bit words: 2^20 or 2^21
) (
    input  wire                 clk,
    input  wire                 host_we,
    input  wire [WORD_BITS-1:0] host_word,
    input  wire [31:0]          host_wdata,
    input  wire [3:0]           host_wstrb,
    input  wire [WORD_BITS-1:0] host_rword,
    output reg  [31:0]          host_rdata,
    input  wire [23:0]          lk_slash24,   // destination >> 8
    output reg  [3:0]           lk_code       // zero-extended for CODE_BITS = 2
);
  reg [31:0] mem [0:(1 << WORD_BITS) - 1];

  always @(posedge clk) begin
    if (host_we) begin
      if (host_wstrb[0]) mem[host_word][7:0]   <= host_wdata[7:0];
      if (host_wstrb[1]) mem[host_word][15:8]  <= host_wdata[15:8];
      if (host_wstrb[2]) mem[host_word][23:16] <= host_wdata[23:16];
      if (host_wstrb[3]) mem[host_word][31:24] <= host_wdata[31:24];
    end
    host_rdata <= mem[host_rword];
  end

  reg [WORD_BITS-1:0] lk_word;
  reg [SLOT_BITS-1:0] lk_slot, lk_slot_d;
  reg [31:0]          lk_data;
  always @(posedge clk) begin
    lk_word   <= lk_slash24[SLOT_BITS +: WORD_BITS];
    lk_slot   <= lk_slash24[SLOT_BITS-1:0];
    lk_data   <= mem[lk_word];
    lk_slot_d <= lk_slot;
    if (CODE_BITS == 4) lk_code <= lk_data[{2'b00, lk_slot_d} * 4 +: 4];
    else                lk_code <= {2'b00, lk_data[{1'b0, lk_slot_d} * 2 +: 2]};
  end
endmodule
