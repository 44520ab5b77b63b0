// NEIGH CAM: ENTRIES neighbours (address 16 bytes, IPv4 as ::ffff:a.b.c.d;
// MAC; port; flags), searched for the full destination of a CONNECTED
// next-hop. Stored in BANKS single-port-read RAMs (entry i lives in bank
// i % BANKS, row i / BANKS); a search reads one row of every bank per clock,
// so ENTRIES/BANKS rows take as many clocks and no RAM needs more than one
// read port. Rows go in index order, so the first row with a hit holds the
// lowest-index match, like a priority CAM.
// Timing: lk_start sampled at clock 0, row r read at clock r+2 and compared
// at clock r+3; hit/mac/port are final after clock ROWS+2 and held until the
// next start (ROWS = 8: readable from clock 11 on).
module fibnic_neigh_cam #(
    parameter ENTRIES = 256,
    parameter BANKS = 32,
    localparam ROWS = ENTRIES / BANKS,
    localparam EW = $clog2(ENTRIES),
    localparam BW = $clog2(BANKS),
    localparam RW = (ROWS > 1) ? $clog2(ROWS) : 1
) (
    input  wire            clk,
    input  wire            rst,
    input  wire            host_we,
    input  wire [EW+2:0]   host_word,     // entry * 8 + word
    input  wire [31:0]     host_wdata,
    input  wire [3:0]      host_wstrb,
    input  wire [EW+2:0]   host_rword,
    output wire [31:0]     host_rdata,
    input  wire            lk_start,
    input  wire [127:0]    lk_key,        // network order, first byte in [127:120]
    output reg             lk_hit,
    output reg  [47:0]     lk_mac,
    output reg  [7:0]      lk_port
);
  wire [EW-1:0] we_entry = host_word[EW+2:3];
  wire [EW-1:0] rd_entry = host_rword[EW+2:3];
  wire [BW-1:0] we_bank = we_entry[BW-1:0];
  wire [RW-1:0] we_row  = we_entry[EW-1:BW];
  wire [BW-1:0] rd_bank = rd_entry[BW-1:0];
  reg  [BW-1:0] rd_bank_d;
  reg  [2:0]    rd_w_d;

  // Search sequencer: row counter and the row read one clock earlier.
  reg [RW:0]  row;        // ROWS = idle
  reg         rd_valid;
  reg [RW-1:0] rd_row;
  reg [127:0] key;
  reg         cmp_valid, found;

  reg [31:0] bank_q [0:BANKS-1][0:5];       // row read out of every bank
  reg [31:0] host_q [0:BANKS-1];
  reg [RW-1:0] host_rd_row;

  genvar g;
  generate
    for (g = 0; g < BANKS; g = g + 1) begin : bank
      reg [31:0] mem [0:ROWS*6-1];  // words 0..5 of each entry, row-major
      integer b, w;
      always @(posedge clk) begin
        if (host_we && we_bank == g[BW-1:0] && host_word[2:0] < 3'd6)
          for (b = 0; b < 4; b = b + 1)
            if (host_wstrb[b]) mem[we_row * 6 + {{(RW-1){1'b0}}, host_word[2:0]}][8*b +: 8] <= host_wdata[8*b +: 8];
        for (w = 0; w < 6; w = w + 1) bank_q[g][w] <= mem[rd_row * 6 + w];
      end
      // Host reads use the same RAM's second (read/write) port.
      always @(posedge clk) host_q[g] <= (rd_w_d < 3'd6) ? mem[host_rd_row * 6 + {{(RW-1){1'b0}}, rd_w_d}] : 32'd0;
    end
  endgenerate

  always @(posedge clk) begin
    host_rd_row <= rd_entry[EW-1:BW];
    rd_bank_d   <= rd_bank;
    rd_w_d      <= host_rword[2:0];
  end
  assign host_rdata = host_q[rd_bank_d];

  function automatic [127:0] addr_of(input [31:0] a0, input [31:0] a1, input [31:0] a2, input [31:0] a3);
    addr_of = {a0[7:0], a0[15:8], a0[23:16], a0[31:24], a1[7:0], a1[15:8], a1[23:16], a1[31:24],
               a2[7:0], a2[15:8], a2[23:16], a2[31:24], a3[7:0], a3[15:8], a3[23:16], a3[31:24]};
  endfunction

  integer k;
  always @(posedge clk) begin : search
    reg hit_now;
    if (rst) begin
      row <= ROWS[RW:0];
      rd_valid <= 1'b0;
      cmp_valid <= 1'b0;
      found <= 1'b1;
    end else begin
      cmp_valid <= rd_valid && !lk_start;
      if (lk_start) begin
        key <= lk_key;
        row <= {(RW+1){1'b0}};
        found <= 1'b0;
        lk_hit <= 1'b0;
        rd_valid <= 1'b0;
      end else if (row < ROWS[RW:0]) begin
        rd_row <= row[RW-1:0];
        rd_valid <= 1'b1;
        row <= row + 1'b1;
      end else begin
        rd_valid <= 1'b0;
      end
      // The row addressed two clocks ago is in bank_q now: compare it.
      if (cmp_valid && !found && !lk_start) begin
        hit_now = 1'b0;
        for (k = 0; k < BANKS; k = k + 1)
          if (!hit_now && bank_q[k][5][24] &&
              addr_of(bank_q[k][0], bank_q[k][1], bank_q[k][2], bank_q[k][3]) == key) begin
            hit_now = 1'b1;
            lk_mac  <= {bank_q[k][4][7:0], bank_q[k][4][15:8], bank_q[k][4][23:16], bank_q[k][4][31:24],
                        bank_q[k][5][7:0], bank_q[k][5][15:8]};
            lk_port <= bank_q[k][5][23:16];
          end
        if (hit_now) begin
          found <= 1'b1;
          lk_hit <= 1'b1;
        end
      end
    end
  end
endmodule
