-- TPC-C tables (clause 1.3), created without keys: keys and the two secondary
-- indexes are built after the load, which is faster than maintaining them
-- row by row. Money is exact NUMERIC (1.3.1); columns are in the order the
-- generators in internal/tpcc write them.
CREATE TABLE item (
  i_id int NOT NULL, i_im_id int NOT NULL, i_name varchar(24) NOT NULL,
  i_price numeric(5,2) NOT NULL, i_data varchar(50) NOT NULL);
CREATE TABLE warehouse (
  w_id int NOT NULL, w_name varchar(10) NOT NULL, w_street_1 varchar(20) NOT NULL,
  w_street_2 varchar(20) NOT NULL, w_city varchar(20) NOT NULL, w_state char(2) NOT NULL,
  w_zip char(9) NOT NULL, w_tax numeric(4,4) NOT NULL, w_ytd numeric(12,2) NOT NULL);
CREATE TABLE district (
  d_id smallint NOT NULL, d_w_id int NOT NULL, d_name varchar(10) NOT NULL,
  d_street_1 varchar(20) NOT NULL, d_street_2 varchar(20) NOT NULL, d_city varchar(20) NOT NULL,
  d_state char(2) NOT NULL, d_zip char(9) NOT NULL, d_tax numeric(4,4) NOT NULL,
  d_ytd numeric(12,2) NOT NULL, d_next_o_id int NOT NULL);
-- STOCK's four counters New-Order updates come right after the key, before
-- the 240 bytes of S_DIST_xx: the WAL record of a same-page update leaves
-- out the bytes the old and new row share at their start and end, so it
-- then carries about 20 bytes of the row instead of about 270.
CREATE TABLE stock (
  s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity smallint NOT NULL,
  s_ytd numeric(8,0) NOT NULL, s_order_cnt int NOT NULL, s_remote_cnt int NOT NULL,
  s_dist_01 char(24) NOT NULL, s_dist_02 char(24) NOT NULL, s_dist_03 char(24) NOT NULL,
  s_dist_04 char(24) NOT NULL, s_dist_05 char(24) NOT NULL, s_dist_06 char(24) NOT NULL,
  s_dist_07 char(24) NOT NULL, s_dist_08 char(24) NOT NULL, s_dist_09 char(24) NOT NULL,
  s_dist_10 char(24) NOT NULL, s_data varchar(50) NOT NULL);
CREATE TABLE customer (
  c_id int NOT NULL, c_d_id smallint NOT NULL, c_w_id int NOT NULL,
  c_first varchar(16) NOT NULL, c_middle char(2) NOT NULL, c_last varchar(16) NOT NULL,
  c_street_1 varchar(20) NOT NULL, c_street_2 varchar(20) NOT NULL, c_city varchar(20) NOT NULL,
  c_state char(2) NOT NULL, c_zip char(9) NOT NULL, c_phone char(16) NOT NULL,
  c_since timestamp NOT NULL, c_credit char(2) NOT NULL, c_credit_lim numeric(12,2) NOT NULL,
  c_discount numeric(4,4) NOT NULL, c_balance numeric(12,2) NOT NULL,
  c_ytd_payment numeric(12,2) NOT NULL, c_payment_cnt int NOT NULL,
  c_delivery_cnt int NOT NULL, c_data varchar(500) NOT NULL);
CREATE TABLE history (
  h_c_id int NOT NULL, h_c_d_id smallint NOT NULL, h_c_w_id int NOT NULL,
  h_d_id smallint NOT NULL, h_w_id int NOT NULL, h_date timestamp NOT NULL,
  h_amount numeric(6,2) NOT NULL, h_data varchar(24) NOT NULL);
CREATE TABLE orders (
  o_id int NOT NULL, o_d_id smallint NOT NULL, o_w_id int NOT NULL, o_c_id int NOT NULL,
  o_entry_d timestamp NOT NULL, o_carrier_id smallint, o_ol_cnt smallint NOT NULL,
  o_all_local smallint NOT NULL);
CREATE TABLE new_order (
  no_o_id int NOT NULL, no_d_id smallint NOT NULL, no_w_id int NOT NULL);
CREATE TABLE order_line (
  ol_o_id int NOT NULL, ol_d_id smallint NOT NULL, ol_w_id int NOT NULL,
  ol_number smallint NOT NULL, ol_i_id int NOT NULL, ol_supply_w_id int NOT NULL,
  ol_delivery_d timestamp, ol_quantity smallint NOT NULL, ol_amount numeric(6,2) NOT NULL,
  ol_dist_info char(24) NOT NULL);
