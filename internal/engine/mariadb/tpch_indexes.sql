-- The foreign-key indexes the common TPC-H kits create (HammerDB's among
-- them), largest first; each line is one statement, run in parallel.
-- lineitem (l_orderkey) and partsupp (ps_partkey) lead their primary keys,
-- which serve them.
CREATE INDEX lineitem_part_supp_fkidx ON lineitem (l_partkey, l_suppkey)
CREATE INDEX orders_customer_fkidx ON orders (o_custkey)
CREATE INDEX partsupp_supplier_fkidx ON partsupp (ps_suppkey)
CREATE INDEX customer_nation_fkidx ON customer (c_nationkey)
CREATE INDEX supplier_nation_fkidx ON supplier (s_nationkey)
CREATE INDEX nation_region_fkidx ON nation (n_regionkey)
