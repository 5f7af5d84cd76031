package tpch

import (
	"fmt"
	"regexp"
	"strconv"
)

// The 22 queries of the specification (clause 2.4), written here for
// PostgreSQL and MariaDB. ":N" is the query's N-th substitution parameter,
// ":s" its stream's number (Q15's view), and {N unit} an interval, which
// the dialects spell differently. Each query ends at its ORDER BY, and the
// queries that return their first rows only (qgen's ":n") LIMIT them.

// Dialect is the SQL a database speaks.
type Dialect string

// The dialects tierbench writes the queries in.
const (
	Postgres Dialect = "postgres"
	MariaDB  Dialect = "mariadb"
)

// Query is a query's statements: those run before it (Q15 creates its
// view), the one whose rows are its answer, and those run after it, even
// when it failed (Q15 drops its view).
type Query struct {
	Setup    []string
	Answer   string
	Teardown []string
}

// Statements returns query n (1 to 22) in dialect d with its substitution
// parameters subs, as stream stream runs it.
func Statements(d Dialect, n int, subs []string, stream int) (Query, error) {
	if n < 1 || n > 22 {
		return Query{}, fmt.Errorf("query %d is not one of TPC-H's 22", n)
	}
	sub := func(text string) string {
		text = paramRef.ReplaceAllStringFunc(text, func(ref string) string {
			if ref == ":s" {
				return strconv.Itoa(stream)
			}
			i, _ := strconv.Atoi(ref[1:])
			if i < 1 || i > len(subs) {
				return ref
			}
			return subs[i-1]
		})
		return interval.ReplaceAllStringFunc(text, func(m string) string {
			p := interval.FindStringSubmatch(m)
			if d == Postgres {
				return "interval '" + p[1] + " " + p[2] + "'"
			}
			return "interval " + p[1] + " " + p[2]
		})
	}
	if n == 15 {
		return Query{
			Setup:    []string{sub(q15View)},
			Answer:   sub(queryText[15]),
			Teardown: []string{sub("drop view revenue:s")},
		}, nil
	}
	return Query{Answer: sub(queryText[n])}, nil
}

var (
	paramRef = regexp.MustCompile(`:(s|[0-9]+)`)
	interval = regexp.MustCompile(`\{([0-9-]+) (day|month|year)\}`)
)

const q15View = `create view revenue:s (supplier_no, total_revenue) as
	select l_suppkey, sum(l_extendedprice * (1 - l_discount))
	from lineitem
	where l_shipdate >= date ':1' and l_shipdate < date ':1' + {3 month}
	group by l_suppkey`

// queryText is each query's text, by number.
var queryText = [23]string{
	1: `select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
	sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
	avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order
from lineitem
where l_shipdate <= date '1998-12-01' - {:1 day}
group by l_returnflag, l_linestatus
order by l_returnflag, l_linestatus`,
	2: `select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
from part, supplier, partsupp, nation, region
where p_partkey = ps_partkey and s_suppkey = ps_suppkey and p_size = :1 and p_type like '%:2'
	and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = ':3'
	and ps_supplycost = (
		select min(ps_supplycost) from partsupp, supplier, nation, region
		where p_partkey = ps_partkey and s_suppkey = ps_suppkey and s_nationkey = n_nationkey
			and n_regionkey = r_regionkey and r_name = ':3')
order by s_acctbal desc, n_name, s_name, p_partkey
limit 100`,
	3: `select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
from customer, orders, lineitem
where c_mktsegment = ':1' and c_custkey = o_custkey and l_orderkey = o_orderkey
	and o_orderdate < date ':2' and l_shipdate > date ':2'
group by l_orderkey, o_orderdate, o_shippriority
order by revenue desc, o_orderdate
limit 10`,
	4: `select o_orderpriority, count(*) as order_count
from orders
where o_orderdate >= date ':1' and o_orderdate < date ':1' + {3 month}
	and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
group by o_orderpriority
order by o_orderpriority`,
	5: `select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
from customer, orders, lineitem, supplier, nation, region
where c_custkey = o_custkey and l_orderkey = o_orderkey and l_suppkey = s_suppkey and c_nationkey = s_nationkey
	and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = ':1'
	and o_orderdate >= date ':2' and o_orderdate < date ':2' + {1 year}
group by n_name
order by revenue desc`,
	6: `select sum(l_extendedprice * l_discount) as revenue
from lineitem
where l_shipdate >= date ':1' and l_shipdate < date ':1' + {1 year}
	and l_discount between :2 - 0.01 and :2 + 0.01 and l_quantity < :3`,
	7: `select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
	select n1.n_name as supp_nation, n2.n_name as cust_nation, extract(year from l_shipdate) as l_year,
		l_extendedprice * (1 - l_discount) as volume
	from supplier, lineitem, orders, customer, nation n1, nation n2
	where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
		and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
		and ((n1.n_name = ':1' and n2.n_name = ':2') or (n1.n_name = ':2' and n2.n_name = ':1'))
		and l_shipdate between date '1995-01-01' and date '1996-12-31'
	) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year`,
	8: `select o_year, sum(case when nation = ':1' then volume else 0 end) / sum(volume) as mkt_share
from (
	select extract(year from o_orderdate) as o_year, l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
	from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
	where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey and o_custkey = c_custkey
		and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey and r_name = ':2'
		and s_nationkey = n2.n_nationkey and o_orderdate between date '1995-01-01' and date '1996-12-31'
		and p_type = ':3'
	) as all_nations
group by o_year
order by o_year`,
	9: `select nation, o_year, sum(amount) as sum_profit
from (
	select n_name as nation, extract(year from o_orderdate) as o_year,
		l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
	from part, supplier, lineitem, partsupp, orders, nation
	where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey and p_partkey = l_partkey
		and o_orderkey = l_orderkey and s_nationkey = n_nationkey and p_name like '%:1%'
	) as profit
group by nation, o_year
order by nation, o_year desc`,
	10: `select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue, c_acctbal, n_name, c_address, c_phone, c_comment
from customer, orders, lineitem, nation
where c_custkey = o_custkey and l_orderkey = o_orderkey and o_orderdate >= date ':1'
	and o_orderdate < date ':1' + {3 month} and l_returnflag = 'R' and c_nationkey = n_nationkey
group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
order by revenue desc
limit 20`,
	11: `select ps_partkey, sum(ps_supplycost * ps_availqty) as value
from partsupp, supplier, nation
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':1'
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
	select sum(ps_supplycost * ps_availqty) * :2
	from partsupp, supplier, nation
	where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':1')
order by value desc`,
	12: `select l_shipmode,
	sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
	sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey and l_shipmode in (':1', ':2') and l_commitdate < l_receiptdate
	and l_shipdate < l_commitdate and l_receiptdate >= date ':3' and l_receiptdate < date ':3' + {1 year}
group by l_shipmode
order by l_shipmode`,
	13: `select c_count, count(*) as custdist
from (
	select c_custkey, count(o_orderkey) as c_count
	from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%:1%:2%'
	group by c_custkey
	) as c_orders
group by c_count
order by custdist desc, c_count desc`,
	14: `select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
	/ sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from lineitem, part
where l_partkey = p_partkey and l_shipdate >= date ':1' and l_shipdate < date ':1' + {1 month}`,
	15: `select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue:s
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue:s)
order by s_suppkey`,
	16: `select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
from partsupp, part
where p_partkey = ps_partkey and p_brand <> ':1' and p_type not like ':2%'
	and p_size in (:3, :4, :5, :6, :7, :8, :9, :10)
	and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
group by p_brand, p_type, p_size
order by supplier_cnt desc, p_brand, p_type, p_size`,
	17: `select sum(l_extendedprice) / 7.0 as avg_yearly
from lineitem, part
where p_partkey = l_partkey and p_brand = ':1' and p_container = ':2'
	and l_quantity < (select 0.2 * avg(l_quantity) from lineitem where l_partkey = p_partkey)`,
	18: `select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
from customer, orders, lineitem
where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > :1)
	and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
order by o_totalprice desc, o_orderdate
limit 100`,
	19: `select sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where (p_partkey = l_partkey and p_brand = ':1' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= :4 and l_quantity <= :4 + 10 and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = ':2' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= :5 and l_quantity <= :5 + 10 and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = ':3' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= :6 and l_quantity <= :6 + 10 and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')`,
	20: `select s_name, s_address
from supplier, nation
where s_suppkey in (
		select ps_suppkey from partsupp
		where ps_partkey in (select p_partkey from part where p_name like ':1%')
			and ps_availqty > (
				select 0.5 * sum(l_quantity) from lineitem
				where l_partkey = ps_partkey and l_suppkey = ps_suppkey
					and l_shipdate >= date ':2' and l_shipdate < date ':2' + {1 year}))
	and s_nationkey = n_nationkey and n_name = ':3'
order by s_name`,
	21: `select s_name, count(*) as numwait
from supplier, lineitem l1, orders, nation
where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
	and l1.l_receiptdate > l1.l_commitdate
	and exists (select * from lineitem l2 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
	and not exists (select * from lineitem l3 where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
		and l3.l_receiptdate > l3.l_commitdate)
	and s_nationkey = n_nationkey and n_name = ':1'
group by s_name
order by numwait desc, s_name
limit 100`,
	22: `select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
from (
	select substring(c_phone from 1 for 2) as cntrycode, c_acctbal
	from customer
	where substring(c_phone from 1 for 2) in (':1', ':2', ':3', ':4', ':5', ':6', ':7')
		and c_acctbal > (
			select avg(c_acctbal) from customer
			where c_acctbal > 0.00 and substring(c_phone from 1 for 2) in (':1', ':2', ':3', ':4', ':5', ':6', ':7'))
		and not exists (select * from orders where o_custkey = c_custkey)
	) as custsale
group by cntrycode
order by cntrycode`,
}

// StreamOrder is the order of the 22 queries in query stream s.
func StreamOrder(s int) []int {
	row := streamOrders[((s%41)+41)%41]
	out := make([]int, len(row))
	for i, n := range row {
		out[i] = int(n)
	}
	return out
}

// streamOrders are the orders of the 22 queries in query streams 0 to 40:
// the specification's Appendix A, as qgen -p prints them. Stream 41 is
// stream 0 again.
var streamOrders = [41][22]int8{
	{14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12},
	{21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4},
	{6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21},
	{8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3},
	{5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20},
	{21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9},
	{10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21},
	{18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12},
	{19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11},
	{8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16},
	{6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5},
	{15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7},
	{1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15},
	{21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19},
	{2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6},
	{16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18},
	{1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21},
	{3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12},
	{14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16},
	{4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1},
	{16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8},
	{20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2},
	{16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17},
	{18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7},
	{7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16},
	{18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9},
	{13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16},
	{14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19},
	{10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11},
	{10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4},
	{7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2},
	{2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22},
	{15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2},
	{15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1},
	{1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2},
	{14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11},
	{9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19},
	{13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20},
	{20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9},
	{3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2},
	{13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19},
}
