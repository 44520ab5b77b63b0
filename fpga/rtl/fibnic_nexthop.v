// NEXTHOP table: 2^CODE_BITS entries of 16 bytes, of which the hardware uses
// bytes 0..7 (dst MAC, port, flags); bytes 8..15 are reserved and read 0.
module fibnic_nexthop #(
    parameter CODE_BITS = 2,
    localparam ENTRIES = 1 << CODE_BITS
) (
    input  wire                   clk,
    input  wire                   host_we,
    input  wire [CODE_BITS+1:0]   host_word,     // entry * 4 + word
    input  wire [31:0]            host_wdata,
    input  wire [3:0]             host_wstrb,
    input  wire [CODE_BITS+1:0]   host_rword,
    output reg  [31:0]            host_rdata,
    input  wire [CODE_BITS-1:0]   lk_code,
    output reg  [47:0]            lk_mac,        // first MAC byte in [47:40]
    output reg  [7:0]             lk_port,
    output reg  [7:0]             lk_flags       // bit0 VALID, bit1 CONNECTED
);
  reg [31:0] w0 [0:ENTRIES-1];  // MAC bytes 0..3
  reg [31:0] w1 [0:ENTRIES-1];  // MAC bytes 4..5, port, flags

  wire [CODE_BITS-1:0] we_entry = host_word[CODE_BITS+1:2];
  wire [CODE_BITS-1:0] rd_entry = host_rword[CODE_BITS+1:2];
  integer b;
  always @(posedge clk) begin
    if (host_we && host_word[1:0] == 2'd0)
      for (b = 0; b < 4; b = b + 1) if (host_wstrb[b]) w0[we_entry][8*b +: 8] <= host_wdata[8*b +: 8];
    if (host_we && host_word[1:0] == 2'd1)
      for (b = 0; b < 4; b = b + 1) if (host_wstrb[b]) w1[we_entry][8*b +: 8] <= host_wdata[8*b +: 8];
    case (host_rword[1:0])
      2'd0: host_rdata <= w0[rd_entry];
      2'd1: host_rdata <= w1[rd_entry];
      default: host_rdata <= 32'd0;
    endcase
    lk_mac   <= {w0[lk_code][7:0], w0[lk_code][15:8], w0[lk_code][23:16], w0[lk_code][31:24],
                 w1[lk_code][7:0], w1[lk_code][15:8]};
    lk_port  <= w1[lk_code][23:16];
    lk_flags <= w1[lk_code][31:24];
  end
endmodule
