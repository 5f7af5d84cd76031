-- TPC-H tables (clause 1.4) for InnoDB, columns in the order of the
-- reference generator's files. Each table is created with its primary key
-- (clause 1.4.2): InnoDB stores a table in its key's order, so adding the
-- key after the load would rebuild the table, while the loader's runs of
-- rows come in key order and append. The foreign-key indexes come after
-- the load (tpch_indexes.sql). Money and quantities are exact
-- decimal(15,2); order keys are bigint (dbgen's pass 2^31 from SF 358 on).
CREATE TABLE region (
  r_regionkey int NOT NULL, r_name char(25) NOT NULL, r_comment varchar(152) NOT NULL,
  PRIMARY KEY (r_regionkey)) ENGINE=InnoDB;
CREATE TABLE nation (
  n_nationkey int NOT NULL, n_name char(25) NOT NULL, n_regionkey int NOT NULL,
  n_comment varchar(152) NOT NULL,
  PRIMARY KEY (n_nationkey)) ENGINE=InnoDB;
CREATE TABLE part (
  p_partkey int NOT NULL, p_name varchar(55) NOT NULL, p_mfgr char(25) NOT NULL,
  p_brand char(10) NOT NULL, p_type varchar(25) NOT NULL, p_size int NOT NULL,
  p_container char(10) NOT NULL, p_retailprice decimal(15,2) NOT NULL, p_comment varchar(23) NOT NULL,
  PRIMARY KEY (p_partkey)) ENGINE=InnoDB;
CREATE TABLE supplier (
  s_suppkey int NOT NULL, s_name char(25) NOT NULL, s_address varchar(40) NOT NULL,
  s_nationkey int NOT NULL, s_phone char(15) NOT NULL, s_acctbal decimal(15,2) NOT NULL,
  s_comment varchar(101) NOT NULL,
  PRIMARY KEY (s_suppkey)) ENGINE=InnoDB;
CREATE TABLE partsupp (
  ps_partkey int NOT NULL, ps_suppkey int NOT NULL, ps_availqty int NOT NULL,
  ps_supplycost decimal(15,2) NOT NULL, ps_comment varchar(199) NOT NULL,
  PRIMARY KEY (ps_partkey, ps_suppkey)) ENGINE=InnoDB;
CREATE TABLE customer (
  c_custkey int NOT NULL, c_name varchar(25) NOT NULL, c_address varchar(40) NOT NULL,
  c_nationkey int NOT NULL, c_phone char(15) NOT NULL, c_acctbal decimal(15,2) NOT NULL,
  c_mktsegment char(10) NOT NULL, c_comment varchar(117) NOT NULL,
  PRIMARY KEY (c_custkey)) ENGINE=InnoDB;
CREATE TABLE orders (
  o_orderkey bigint NOT NULL, o_custkey int NOT NULL, o_orderstatus char(1) NOT NULL,
  o_totalprice decimal(15,2) NOT NULL, o_orderdate date NOT NULL, o_orderpriority char(15) NOT NULL,
  o_clerk char(15) NOT NULL, o_shippriority int NOT NULL, o_comment varchar(79) NOT NULL,
  PRIMARY KEY (o_orderkey)) ENGINE=InnoDB;
CREATE TABLE lineitem (
  l_orderkey bigint NOT NULL, l_partkey int NOT NULL, l_suppkey int NOT NULL,
  l_linenumber int NOT NULL, l_quantity decimal(15,2) NOT NULL, l_extendedprice decimal(15,2) NOT NULL,
  l_discount decimal(15,2) NOT NULL, l_tax decimal(15,2) NOT NULL, l_returnflag char(1) NOT NULL,
  l_linestatus char(1) NOT NULL, l_shipdate date NOT NULL, l_commitdate date NOT NULL,
  l_receiptdate date NOT NULL, l_shipinstruct char(25) NOT NULL, l_shipmode char(10) NOT NULL,
  l_comment varchar(44) NOT NULL,
  PRIMARY KEY (l_orderkey, l_linenumber)) ENGINE=InnoDB;
CREATE TABLE tpch_meta (
  scale_factor double NOT NULL, status varchar(16) NOT NULL,
  rf1_sets int NOT NULL DEFAULT 0, rf2_sets int NOT NULL DEFAULT 0,
  started_at datetime NOT NULL, finished_at datetime NULL, tierbench_version varchar(64)) ENGINE=InnoDB;
